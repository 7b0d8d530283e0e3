// Full analysis of 10,000 tests × 100 runs (1M stored results) through one streaming scan, beside the naive
// per-test-query baseline (the Breadcrumb reference's getRuns per test) measured in the same run; then the
// verdict accuracy on generated histories with known truth (precision and recall of flaky and broken).
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const dir = join(import.meta.dirname, '.tmp', 'analysis')
if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })
// The generators are TypeScript test helpers; compile them next to a copy of the model types they import.
execFileSync(
  process.execPath,
  [
    join(root, 'node_modules/typescript/bin/tsc'),
    'test/analysis/generate.ts',
    '--outDir',
    join(dir, 'gen'),
    '--rootDir',
    '.',
    '--module',
    'nodenext',
    '--target',
    'es2022',
    '--skipLibCheck',
  ],
  { cwd: root },
)
const gen = await import(join(dir, 'gen', 'test', 'analysis', 'generate.js'))
const { openSqliteStore } = await import('../dist/store/sqlite/sqlite-store.js')
const { analyzeStore } = await import('../dist/pipeline/analyze-store.js')
const { analyzeTest, resolveAnalysisConfig, infraRunIds } = await import('../dist/analysis/index.js')

const TESTS = Number(process.env.BENCH_TESTS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 100)
const suite = gen.generateSuite({ seed: 42, tests: TESTS, runs: RUNS, jobsPerRevision: 2, infraRuns: 2 })
const store = await openSqliteStore(join(dir, 'a.db'))
const runMeta = (r) => ({
  runId: r.runId,
  suite: 'bench',
  branch: r.branch,
  revision: r.revision,
  pipelineId: r.pipelineId,
  pipelineUrl: null,
  jobId: null,
  jobUrl: null,
  artifactsUrl: null,
  jobStatus: r.jobStatus,
  pipelineStatus: r.pipelineStatus,
  runnerId: r.runnerId,
  env: r.env,
  startedAt: new Date(r.at).toISOString(),
  finishedAt: null,
  durationMs: null,
  status: r.status,
})
const byRun = suite.timeline.runs.map(() => [])
const runIndex = new Map(suite.timeline.runs.map((r, i) => [r.runId, i]))
for (const t of suite.tests) {
  t.history.entries.forEach((e, k) => {
    byRun[runIndex.get(e.run.runId) ?? k].push({
      test: { ...t.history.test, suite: 'bench', testId: `bench::${t.history.test.module}::${t.history.test.name}` },
      status: e.status,
      flakyOnRetry: e.flakyOnRetry,
      durationMs: e.durationMs,
      errorType: e.errorType,
      message: e.message,
      healingOccurred: false,
      attempts: Array.from({ length: e.attempts }, (_, i) => ({
        retry: i,
        status: i < e.failedAttempts ? 'failed' : e.status,
        durationMs: null,
        message: null,
        stack: null,
      })),
    })
  })
}
for (let i = 0; i < byRun.length; i++) {
  await store.ingestReport({
    file: `run-${i}`,
    contentHash: `h${i}`,
    runs: [{ run: runMeta(suite.timeline.runs[i]), results: byRun[i] }],
  })
}
const results = (await store.stats()).results
const now = suite.timeline.now

let t0 = performance.now()
const analyses = await analyzeStore(store, { now })
const fullS = (performance.now() - t0) / 1000

// Baseline: what a per-test design does, one query per test, then the same pure analysis.
const cfg = resolveAnalysisConfig()
t0 = performance.now()
const excluded = infraRunIds(await store.runSummaries(), cfg)
const ids = (await store.listTests()).map((t) => t.testId)
let naiveCount = 0
for (const id of ids) {
  const h = await store.getTestHistory(id, { limit: 1000 })
  if (h) (analyzeTest(h, cfg, { now, excludedRuns: excluded }), naiveCount++)
}
const naiveS = (performance.now() - t0) / 1000
await store.close()
if (analyses.length !== naiveCount) throw new Error(`scan saw ${analyses.length} tests, naive ${naiveCount}`)

const line = (o) => console.log(JSON.stringify(o))
line({
  bench: 'analysis',
  metric: `full analysis of ${TESTS} tests × ${RUNS} runs, s (scan + analysis)`,
  value: +fullS.toFixed(2),
  target: '<= 1.5',
  results,
})
line({ bench: 'analysis', metric: 'baseline: naive query per test + same analysis, s', value: +naiveS.toFixed(2) })
line({ bench: 'analysis', metric: 'ratio naive / streaming scan', value: +(naiveS / fullS).toFixed(1) })

// Accuracy: 100 generated tests per family and rate, as in test/analysis/accuracy.test.ts.
const families = [
  ['stable'],
  ['broken'],
  ['flaky', 0.02],
  ['flaky', 0.05],
  ['flaky', 0.1],
  ['flaky', 0.3],
  ['flaky', 0.5],
  ['flaky_one_runner', 0.3],
  ['bursty'],
  ['fixed', 0.3],
  ['newly_flaky', 0.3],
]
const tally = { flaky: { tp: 0, fp: 0, fn: 0 }, broken: { tp: 0, fp: 0, fn: 0 } }
for (const [family, p] of families) {
  let correct = 0
  for (let i = 0; i < 100; i++) {
    const seed = 1000 * (p ?? 0) + i + 1
    const timeline = gen.generateTimeline({ seed, runs: 100, jobsPerRevision: 1, infraRuns: 3 })
    const opts = { family, retries: 0, runner: 'ci-1', ...(p === undefined ? {} : { p }) }
    const g = gen.generateHistory(timeline, i, opts, seed * 31 + i)
    const summaries = timeline.runs.map((r, k) => ({
      runId: r.runId,
      total: 50,
      failed: timeline.infra.has(k) ? 50 : 1,
    }))
    const a = analyzeTest(g.history, cfg, { now: timeline.now, excludedRuns: infraRunIds(summaries, cfg) })
    const truth = gen.TRUTH[family]
    if (a.verdict === truth) correct++
    if (family === 'flaky' && p < 0.1) continue
    for (const kind of ['flaky', 'broken']) {
      if (a.verdict === kind && truth === kind) tally[kind].tp++
      else if (a.verdict === kind) tally[kind].fp++
      else if (truth === kind) tally[kind].fn++
    }
  }
  line({
    bench: 'accuracy',
    metric: `correct verdicts: ${family}${p === undefined ? '' : ` p=${p}`} (1 job per revision, no retries)`,
    value: correct / 100,
  })
}
for (const kind of ['flaky', 'broken']) {
  const t = tally[kind]
  line({
    bench: 'accuracy',
    metric: `${kind}: precision`,
    value: +(t.tp / (t.tp + t.fp)).toFixed(3),
    note: 'flaky p < 0.1 left out',
  })
  line({ bench: 'accuracy', metric: `${kind}: recall`, value: +(t.tp / (t.tp + t.fn)).toFixed(3) })
}
if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true })
