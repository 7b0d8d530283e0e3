// `flakewatch analyze --json` as a whole process over 1M stored results (10,000 tests × 100 runs, SQLite), reading
// the persisted analyses (issue 32), beside the full scan in the same run (`--since` before every run: the same
// output, and no persisted row answers it). Both outputs are compared byte for byte. Also measured: the sweep that
// analyses every row once, and a writer's re-analysis of one new 10,000-result report just after its commit.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { compileTestHelpers } from './lib/test-helpers.mjs'

const { dir, importHelper } = compileTestHelpers('analyze-persisted', ['test/analysis/generate.ts'])
const gen = await importHelper('test/analysis/generate.ts')
const { openSqliteStore } = await import('../dist/store/sqlite/sqlite-store.js')
const { refreshAnalyses, refreshAfterWrite } = await import('../dist/pipeline/persisted-analyses.js')
const { analysisOptions, loadConfig } = await import('../dist/config/load.js')
const { resolveAnalysisConfig } = await import('../dist/analysis/index.js')

const TESTS = Number(process.env.BENCH_TESTS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 100)
const REPEATS = 3
const CLI = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js')
const db = join(dir, 'store.db')

const suite = gen.generateSuite({ seed: 7, tests: TESTS, runs: RUNS + 1, jobsPerRevision: 2, infraRuns: 2 })
const perRun = new Map(suite.timeline.runs.map((r) => [r.runId, []]))
// Files of 10 tests each, as a real suite has (the generator puts every test in one file).
const FILES = Math.max(1, Math.round(TESTS / 10))
for (const [i, t] of suite.tests.entries()) {
  const module = `src/f${i % FILES}.test.ts`
  const test = { ...t.history.test, suite: 'bench', module, testId: `bench::${module}::${t.history.test.name}` }
  for (const { run, status, flakyOnRetry, durationMs, errorType, message } of t.history.entries) {
    const kept = { status, flakyOnRetry, durationMs, errorType, message }
    perRun.get(run.runId).push({ test, ...kept, healingOccurred: false, attempts: [] })
  }
}
const report = (r, i) => ({
  file: `run-${i}.json`,
  contentHash: `bench-${i}`,
  runs: [
    {
      run: {
        ...{ runId: r.runId, suite: 'bench', branch: r.branch, revision: r.revision, pipelineId: r.pipelineId },
        ...{ pipelineUrl: null, jobId: null, jobUrl: null, artifactsUrl: null, jobStatus: r.jobStatus },
        ...{ pipelineStatus: r.pipelineStatus, runnerId: r.runnerId, env: r.env, status: r.status },
        ...{ startedAt: new Date(r.at).toISOString(), finishedAt: null, durationMs: null },
      },
      results: perRun.get(r.runId),
    },
  ],
})

// The analysis configuration `analyze` resolves in `dir`, where no config file is.
const options = analysisOptions(loadConfig({ cwd: dir, env: {} }))
const cfg = resolveAnalysisConfig(options)
const runs = suite.timeline.runs
const store = await openSqliteStore(db)
// Every run but the newest, as a store fed by writers that never refreshed (a sweep's worst case).
for (let i = 0; i < runs.length - 1; i++) await store.ingestReport(report(runs[i], i))
let t0 = performance.now()
const swept = await refreshAnalyses(store, cfg)
const sweepS = (performance.now() - t0) / 1000
// The newest run as a writer stores it: its commit, then its tests re-analysed.
const outcomes = await store.ingestReport(report(runs.at(-1), runs.length - 1))
t0 = performance.now()
const warning = await refreshAfterWrite(
  store,
  options,
  outcomes.map((o) => o.runId),
)
const writerS = (performance.now() - t0) / 1000
if (warning !== null) throw new Error(warning)
// Rows the newest run moved the clock past: a server's sweep does these in the background.
t0 = performance.now()
const due = await refreshAnalyses(store, cfg)
const afterS = (performance.now() - t0) / 1000
const results = (await store.stats()).results
await store.close()

/**
 * One `analyze --json` process: its wall time, and its CPU time (user + system, from bash's `times` for its
 * children), which a loaded machine does not inflate as it does the wall time.
 */
function timed(args) {
  const out = join(dir, `out-${args.length}.json`)
  const t = performance.now()
  const times = execFileSync(
    'bash',
    [
      '-c',
      '"$@" >/dev/null && times',
      'analyze',
      process.execPath,
      CLI,
      'analyze',
      '--json',
      '--db',
      db,
      '--output',
      out,
      ...args,
    ],
    { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const s = (performance.now() - t) / 1000
  // `times` prints the shell's own user/system line, then its children's: "0m0.812s 0m0.190s".
  const [user, sys] = [
    ...times
      .trim()
      .split('\n')[1]
      .matchAll(/(\d+)m([\d.]+)s/g),
  ].map((m) => +m[1] * 60 + +m[2])
  return { s, cpu: user + sys, hash: createHash('sha256').update(readFileSync(out)).digest('hex') }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const persisted = []
const scanned = []
const hashes = new Set()
for (let i = 0; i < REPEATS; i++) {
  const p = timed([])
  const s = timed(['--since', '0000-01-01'])
  persisted.push(p)
  scanned.push(s)
  hashes.add(p.hash).add(s.hash)
}
if (hashes.size !== 1) throw new Error('analyze --json from the persisted analyses differs from the full scan')
const readS = median(persisted.map((p) => p.s))
const scanS = median(scanned.map((p) => p.s))
// The machine's load: the wall times above are this machine's share of two shared cores, the CPU times are not.
const load = loadavg()[0].toFixed(2)

const line = (o) => console.log(JSON.stringify({ bench: 'analyze-persisted', ...o }))
line({
  metric: `analyze --json, whole process, ${TESTS} tests × ${RUNS + 1} runs, persisted analyses, s (median of ${REPEATS})`,
  value: +readS.toFixed(2),
  target: '<= 1.5',
  results,
  identical_output: true,
  cpu_s: +median(persisted.map((p) => p.cpu)).toFixed(2),
  load_avg: load,
})
line({
  metric: 'baseline: analyze --json, whole process, full scan (same run), s',
  value: +scanS.toFixed(2),
  cpu_s: +median(scanned.map((p) => p.cpu)).toFixed(2),
  load_avg: load,
})
line({ metric: 'ratio full scan / persisted', value: +(scanS / readS).toFixed(1), load_avg: load })
line({
  metric: `sweep analysing every row once (${swept.written} tests), s`,
  value: +sweepS.toFixed(2),
  tests_per_s: Math.round(swept.written / sweepS),
  load_avg: load,
})
line({
  metric: `writer re-analysis after one ${perRun.get(runs.at(-1).runId).length}-result report, s`,
  value: +writerS.toFixed(2),
  then_swept: due.written,
  then_swept_s: +afterS.toFixed(2),
  load_avg: load,
})
