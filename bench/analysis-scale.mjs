// The CLI's analysis commands on a SQLite store of 1M distinct tests (× 2 runs) and on one of 1M runs (× 2 tests):
// wall time and peak RSS of `analyze` (table, --json, --format markdown), `show`, `export csv` and `export stats`,
// each as its own process, beside a bare scan of the same store (every history read, nothing analysed) measured in
// the same run. Stores are built through the store API (test/helpers/scale-store.ts).
import { spawnSync } from 'node:child_process'
import os from 'node:os'
import { rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { compileTestHelpers } from './lib/test-helpers.mjs'

const root = join(import.meta.dirname, '..')
const { dir, importHelper } = compileTestHelpers('analysis-scale', ['test/helpers/scale-store.ts'])
const { buildScaleStore, scaleTestId } = await importHelper('test/helpers/scale-store.ts')
const { openSqliteStore } = await import('../dist/store/sqlite/sqlite-store.js')

const SCALE = Number(process.env.BENCH_SCALE ?? 1_000_000)
const SHAPES = [
  { name: `${SCALE} tests × 2 runs`, file: 'tests.db', tests: SCALE, runs: 2 },
  { name: `${SCALE} runs × 2 tests`, file: 'runs.db', tests: 2, runs: SCALE },
]
const cli = join(root, 'dist', 'cli', 'main.js')
const line = (o) => console.log(JSON.stringify(o))

// A process's wall time and peak RSS, from GNU time.
function measure(args, out) {
  const t0 = performance.now()
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...args], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 1 << 20,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', out ? 'ignore' : 'pipe', 'pipe'],
  })
  const s = (performance.now() - t0) / 1000
  const rssMB = Number(r.stderr.trim().split('\n').pop()) / 1024
  return { status: r.status, s: +s.toFixed(1), rssMB: Math.round(rssMB), stderr: r.stderr.slice(-400) }
}

const scanScript = join(dir, 'bare-scan.mjs')
writeFileSync(
  scanScript,
  `import { openSqliteStore } from ${JSON.stringify(join(root, 'dist/store/sqlite/sqlite-store.js'))}
const store = await openSqliteStore(process.argv[2], { readOnly: true })
let n = 0
for await (const h of store.scanHistory({})) n += h.entries.length
await store.close()
console.log(n)
`,
)

for (const shape of SHAPES) {
  const db = join(dir, shape.file)
  let t0 = performance.now()
  try {
    statSync(db)
  } catch {
    const store = await openSqliteStore(db)
    await buildScaleStore(store, { tests: shape.tests, runs: shape.runs })
    await store.close()
  }
  const buildS = (performance.now() - t0) / 1000
  const base = measure([scanScript, db])
  line({
    bench: 'analysis-scale',
    metric: `baseline: bare scan of ${shape.name}, s`,
    value: base.s,
    rssMB: base.rssMB,
    exit: base.status,
    buildS: +buildS.toFixed(0),
  })
  const commands = [
    ['analyze (table)', ['analyze', '--db', db, '-o', 'a.txt']],
    ['analyze --json', ['analyze', '--db', db, '--json', '-o', 'a.json']],
    ['analyze --format markdown', ['analyze', '--db', db, '--format', 'markdown', '-o', 'a.md']],
    ['show', ['show', scaleTestId(0), '--db', db]],
    ['export csv', ['export', 'csv', '--db', db, '-o', 'a.csv']],
    ['export stats', ['export', 'stats', '--db', db, '-o', 'a-stats.json']],
  ]
  for (const [label, args] of commands) {
    const m = measure([cli, ...args], true)
    line({
      bench: 'analysis-scale',
      metric: `${label} on ${shape.name}, s`,
      value: m.status === 0 ? m.s : `exit ${m.status}`,
      rssMB: m.rssMB,
      target: 'exit 0, RSS < 1500 MB',
      vs_scan: m.status === 0 ? +(m.s / base.s).toFixed(1) : undefined,
      ...(m.status === 0 ? {} : { error: m.stderr.replace(/\s+/g, ' ').slice(-200) }),
    })
  }
}
line({
  bench: 'analysis-scale',
  metric: 'machine load (uptime 1-min average) at the end',
  value: os.loadavg()[0].toFixed(2),
})
if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true })
