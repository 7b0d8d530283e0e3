/**
 * Generated CI histories with known root causes, for the hint tests and bench/hints.mjs: one shared timeline of
 * runs (runners of different speeds, a numeric `workers` facet, every file's tests shuffled per run), and files of
 * six tests each, all of one cause. Pure TypeScript, no test-runner imports.
 */
import type { HistoryEntry, RunInfo, TestHistory } from '../../src/model.js'
import { createRng } from './generate.js'

export type Cause = 'one_runner' | 'time_window' | 'parallelism' | 'bursts' | 'timeouts' | 'order' | 'random' | 'stable'

export const CAUSES: Cause[] = [
  'one_runner',
  'time_window',
  'parallelism',
  'bursts',
  'timeouts',
  'order',
  'random',
  'stable',
]

const HOUR = 3_600_000
export const TIMEOUT_MS = 30_000
export const RUNNERS = ['ci-1', 'ci-2', 'ci-3', 'ci-4', 'ci-5', 'ci-6', 'ci-7', 'ci-8', 'ci-9', 'ci-10']
/** The three slow runners (1.4× slower); the others run at full speed. */
export const SLOW_RUNNERS = ['ci-8', 'ci-9', 'ci-10']
export const WORKERS = ['1', '2', '4', '6', '8']
export const TESTS_PER_FILE = 6

export interface CausedTest {
  history: TestHistory
  cause: Cause
  /** What the right hint names: the runner, the polluter's test id, the burst runs; null for the controls. */
  truth: { runner?: string; polluter?: string; burstRuns?: Set<number>; victim: boolean }
}

export interface CausedSuite {
  runs: RunInfo[]
  tests: CausedTest[]
  now: number
}

/** `files` files of each cause, over `runs` runs. Seeded: the same options give the same histories. */
export function generateCausedSuite(opts: {
  seed: number
  runs?: number
  filesPerCause?: number
  causes?: Cause[]
}): CausedSuite {
  const rng = createRng(opts.seed)
  const count = opts.runs ?? 150
  const runs: RunInfo[] = []
  let at = Date.UTC(2025, 0, 1)
  for (let i = 0; i < count; i++) {
    at += 3 * HOUR + Math.floor(rng() * 2 * HOUR)
    runs.push({
      runId: `c${opts.seed}-${i}`,
      suite: 'unit',
      at,
      branch: 'main',
      revision: `rev${i}`,
      pipelineId: `p${i}`,
      jobStatus: 'success',
      pipelineStatus: 'success',
      runnerId: RUNNERS[Math.floor(rng() * RUNNERS.length)]!,
      env: { workers: WORKERS[Math.floor(rng() * WORKERS.length)]! },
      status: 'complete',
      pipelineUrl: null,
      artifactsUrl: null,
    })
  }
  const tests: CausedTest[] = []
  let fileNo = 0
  for (const cause of opts.causes ?? CAUSES) {
    for (let f = 0; f < (opts.filesPerCause ?? 2); f++) tests.push(...file(runs, cause, fileNo++, rng))
  }
  return { runs, tests, now: at + HOUR }
}

function file(runs: RunInfo[], cause: Cause, fileNo: number, rng: () => number): CausedTest[] {
  const module = `${cause}-${fileNo}.test.ts`
  const n = runs.length
  // Every run executes the file's tests in a new order.
  const orders = runs.map(() => shuffle([...Array(TESTS_PER_FILE).keys()], rng))
  const out: CausedTest[] = []
  const polluterId = `unit::${module}::t0`
  for (let t = 0; t < TESTS_PER_FILE; t++) {
    const name = `t${t}`
    const testId = `unit::${module}::${name}`
    // In an order-dependency file, t0 pollutes and t1 suffers; the other four are stable.
    const victim = cause === 'order' ? t === 1 : cause !== 'stable' && cause !== 'random'
    const p = 0.3 + rng() * 0.5
    const randomP = 0.02 + rng() * 0.38
    const badRunner = RUNNERS[Math.floor(rng() * RUNNERS.length)]!
    const baseMs = 19_000 + rng() * 3_000
    const burstRuns = new Set<number>()
    if (cause === 'bursts') {
      const bursts = 1 + Math.floor(rng() * 3)
      for (let b = 0; b < bursts; b++) {
        const start = Math.floor(rng() * (n - 12))
        const len = 6 + Math.floor(rng() * 7) // a day or two of runs, 4 hours apart
        for (let i = start; i < start + len; i++) burstRuns.add(i)
      }
    }
    const entries: HistoryEntry[] = []
    for (let i = 0; i < n; i++) {
      const run = runs[i]!
      const position = orders[i]!.indexOf(t)
      let q = 0
      let durationMs = 50 + rng() * 100
      let message = 'expected true to be false'
      if (victim || cause === 'random') {
        switch (cause) {
          case 'one_runner':
            q = run.runnerId === badRunner ? p : 0
            break
          case 'time_window':
            q = new Date(run.at).getUTCHours() < 6 ? p : 0
            break
          case 'parallelism':
            q = Number(run.env.workers) >= 6 ? p : 0
            break
          case 'bursts':
            q = burstRuns.has(i) ? 0.7 : 0
            break
          case 'order':
            q = orders[i]!.indexOf(0) < position ? p : 0
            break
          case 'random':
            q = randomP
            break
          case 'timeouts': {
            // Slower runners and a slowly growing test push it over the 30 s timeout now and then.
            const speed = SLOW_RUNNERS.includes(run.runnerId!) ? 1.4 : 1
            durationMs = baseMs * speed * (1 + (0.15 * i) / n) * Math.exp(0.08 * normal(rng))
            break
          }
        }
      }
      let failed = rng() < q
      if (cause === 'timeouts' && durationMs >= TIMEOUT_MS) {
        failed = true
        durationMs = TIMEOUT_MS + rng() * 200
        message = `Test timed out in ${TIMEOUT_MS}ms.`
      }
      entries.push({
        run,
        status: failed ? 'failed' : 'passed',
        flakyOnRetry: false,
        durationMs: Math.round(durationMs),
        attempts: 1,
        failedAttempts: failed ? 1 : 0,
        failedAttemptsMs: failed ? Math.round(durationMs) : 0,
        errorType: failed ? 'Error' : null,
        message: failed ? message : null,
        healingOccurred: false,
        position: fileNo * TESTS_PER_FILE + position,
      })
    }
    const truth: CausedTest['truth'] = { victim }
    if (cause === 'one_runner') truth.runner = badRunner
    if (cause === 'order') truth.polluter = polluterId
    if (cause === 'bursts') truth.burstRuns = burstRuns
    out.push({ history: { test: { testId, suite: 'unit', module, name, file: module }, entries }, cause, truth })
  }
  return out
}

function shuffle<T>(xs: T[], rng: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1))
    ;[xs[i], xs[j]] = [xs[j]!, xs[i]!]
  }
  return xs
}

function normal(rng: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng())
}
