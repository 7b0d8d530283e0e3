// What `flakewatch ingest` costs after its commit: re-analysing the persisted analyses of the tests its report
// touched (issue 32), for one passing JUnit report of 150,000 cases in 50 interleaved classes (each an ordered
// file of 3,000 tests), on SQLite, in a process with a 48 MB heap as test/e2e/cli-ingest-hostile.test.ts runs it.
// Baseline in the same run: storing that report, in the same process. With BENCH_BASELINE_ROOT (a checkout with
// its own dist/), the same is measured for that build too.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'

const CASES = Number(process.env.BENCH_CASES ?? 150_000)
const CLASSES = 50

if (process.argv[2] === '--child') {
  const [root, db, file] = process.argv.slice(3)
  const { openStore } = await import(join(root, 'dist/store/open.js'))
  const { ingestFiles } = await import(join(root, 'dist/pipeline/ingest-files.js'))
  const { refreshAfterWrite } = await import(join(root, 'dist/pipeline/persisted-analyses.js'))
  const { analysisOptions, loadConfig } = await import(join(root, 'dist/config/load.js'))
  const store = await openStore({ db, env: {}, createFolder: false })
  let t = performance.now()
  const summary = await ingestFiles({ store, inputs: [file], context: {}, root: null })
  const storeS = (performance.now() - t) / 1000
  if (summary.ingested.length !== 1) throw new Error(JSON.stringify(summary.failed))
  t = performance.now()
  const analysis = analysisOptions(loadConfig({ cwd: tmpdir(), env: {} }))
  const warning = await refreshAfterWrite(
    store,
    analysis,
    summary.ingested.map((i) => i.run_id),
  )
  const refreshS = (performance.now() - t) / 1000
  if (warning !== null) throw new Error(warning)
  const { rows, due } = await store.analyses().analysisBacklog(Number.MAX_SAFE_INTEGER - 1)
  await store.close()
  const rssMB = Math.round(process.resourceUsage().maxRSS / 1024)
  console.log(JSON.stringify({ storeS, refreshS, rows, rssMB, dueAfter: due }))
  process.exit(0)
}

const dir = mkdtempSync(join(tmpdir(), 'fw-ingest-refresh-'))
try {
  const file = join(dir, 'big.xml')
  const parts = ['<?xml version="1.0"?><testsuite name="s" timestamp="2026-03-01T10:00:00Z">']
  for (let i = 0; i < CASES; i++) parts.push(`<testcase classname="c${i % CLASSES}" name="t${i}" time="0.001"/>`)
  parts.push('</testsuite>')
  writeFileSync(file, parts.join(''))
  const measure = (root, name) => {
    const out = execFileSync(
      process.execPath,
      ['--max-old-space-size=48', import.meta.filename, '--child', root, join(dir, `${name}.db`), file],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    )
    return JSON.parse(out.trim().split('\n').at(-1))
  }
  const line = (o) => console.log(JSON.stringify({ bench: 'ingest-refresh', ...o }))
  const here = measure(join(import.meta.dirname, '..'), 'here')
  line({
    metric: `re-analysis after storing one ${CASES}-case report (${CLASSES} ordered files), 48 MB heap, s`,
    value: +here.refreshS.toFixed(1),
    rows: here.rows,
    rssMB: here.rssMB,
    load_avg: +loadavg()[0].toFixed(1),
  })
  line({ metric: 'baseline: storing that report (same process), s', value: +here.storeS.toFixed(1) })
  line({ metric: 'ratio re-analysis / storing', value: +(here.refreshS / here.storeS).toFixed(1) })
  const baseRoot = process.env.BENCH_BASELINE_ROOT
  if (baseRoot) {
    const base = measure(baseRoot, 'base')
    const label = process.env.BENCH_BASELINE_LABEL ?? baseRoot
    line({
      metric: `same re-analysis, build ${label} (same run), s`,
      value: +base.refreshS.toFixed(1),
      rssMB: base.rssMB,
      store_s: +base.storeS.toFixed(1),
    })
    line({ metric: `ratio ${label} / this build`, value: +(base.refreshS / here.refreshS).toFixed(1) })
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
