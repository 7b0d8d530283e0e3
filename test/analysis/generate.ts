/**
 * Deterministic generators of test histories with a known truth, one family per behaviour, for the accuracy tests
 * and the analysis benchmark. Pure TypeScript, no test-runner imports.
 */
import type { EnvFacets, HistoryEntry, RunInfo, TestHistory, TestRef } from '../../src/model.js'

export type Family =
  | 'stable'
  | 'broken'
  | 'flaky'
  | 'flaky_one_runner'
  | 'bursty'
  | 'bursty_long_gaps'
  | 'fixed'
  | 'newly_flaky'
  | 'branch_only'
export type Truth = 'healthy' | 'flaky' | 'broken'

/**
 * The truth of each family. `branch_only` fails on every run of one feature branch from some run on, and passes
 * everywhere else: broken on that branch, healthy on the default branch, never flaky. `bursty_long_gaps` fails
 * in bursts of 4–8 runs separated by clean stretches of 30–45 runs, and its newest clean stretch is at most 30
 * runs: shorter than its gaps, so it is not fixed.
 */
export const TRUTH: Record<Family, Truth> = {
  stable: 'healthy',
  broken: 'broken',
  flaky: 'flaky',
  flaky_one_runner: 'flaky',
  bursty: 'flaky',
  bursty_long_gaps: 'flaky',
  fixed: 'healthy',
  newly_flaky: 'flaky',
  branch_only: 'healthy',
}

/** mulberry32: small, fast, good enough for simulations, and the same sequence everywhere. */
export function createRng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface TimelineOptions {
  seed: number
  runs?: number
  /** Epoch ms of the first run. */
  start?: number
  intervalMs?: number
  /** Jobs (runs) per pipeline; all jobs of a pipeline test the same revision. */
  jobsPerRevision?: number
  runners?: string[]
  /** Env facet combinations, picked per run. */
  envs?: EnvFacets[]
  branch?: string
  /** How many runs, spread at random, are infrastructure failures where every test fails. */
  infraRuns?: number
  /** Share of runs on feature branches (`feat/<k>`, each a few runs long, interleaved with the default branch). */
  featureBranchShare?: number
  /** How many runs were cancelled half-way: `interrupted`, with about half of the tests missing. */
  cancelledRuns?: number
}

export interface Timeline {
  runs: RunInfo[]
  /** Indices of the infrastructure-failure runs. */
  infra: Set<number>
  /** Indices of the cancelled runs. */
  cancelled: Set<number>
  /** One hour after the last run: a natural `ctx.now`. */
  now: number
}

const HOUR = 3_600_000

/** A sequence of CI runs shared by every generated test. */
export function generateTimeline(opts: TimelineOptions): Timeline {
  const rng = createRng(opts.seed ^ 0x5eed)
  const count = opts.runs ?? 100
  const start = opts.start ?? Date.UTC(2025, 0, 1)
  const interval = opts.intervalMs ?? 6 * HOUR
  const jobs = opts.jobsPerRevision ?? 2
  const runners = opts.runners ?? ['ci-1', 'ci-2', 'ci-3', 'ci-4']
  const envs = opts.envs ?? [{ os: 'linux' }]
  const runs: RunInfo[] = []
  const featureShare = opts.featureBranchShare ?? 0
  let feature = 0
  let featureRuns = 0
  let pipeline = -1
  let prevBranch: string | null = null
  for (let i = 0; i < count; i++) {
    const onFeature = featureShare > 0 && rng() < featureShare
    if (onFeature && featureRuns >= 3 + Math.floor(rng() * 5)) {
      feature++
      featureRuns = 0
    }
    if (onFeature) featureRuns++
    const branch = onFeature ? `feat/${feature}` : (opts.branch ?? 'main')
    // A pipeline has `jobs` runs of one revision on one branch.
    if (i % jobs === 0 || branch !== prevBranch) pipeline++
    prevBranch = branch
    const revision = hex(pipeline * 2654435761 + opts.seed)
    runs.push({
      runId: `r${opts.seed}-${i}`,
      suite: 'unit',
      at: start + i * interval + Math.floor((rng() - 0.5) * HOUR),
      branch,
      revision,
      pipelineId: `p${pipeline}`,
      jobStatus: 'success',
      pipelineStatus: 'success',
      runnerId: runners[Math.floor(rng() * runners.length)]!,
      env: envs[Math.floor(rng() * envs.length)]!,
      status: 'complete',
      pipelineUrl: null,
      artifactsUrl: null,
    })
  }
  const infra = new Set<number>()
  while (infra.size < Math.min(opts.infraRuns ?? 0, count)) infra.add(Math.floor(rng() * count))
  for (const i of infra) runs[i]!.jobStatus = 'failed'
  const cancelled = new Set<number>()
  while (cancelled.size < Math.min(opts.cancelledRuns ?? 0, count - infra.size)) {
    const i = Math.floor(rng() * count)
    if (!infra.has(i)) cancelled.add(i)
  }
  for (const i of cancelled) {
    runs[i]!.status = 'interrupted'
    runs[i]!.jobStatus = 'canceled'
  }
  return { runs, infra, cancelled, now: start + count * interval + HOUR }
}

export interface FamilyOptions {
  family: Family
  /** Failure probability per attempt while flaky (flaky, flaky_one_runner, fixed, newly_flaky). */
  p?: number
  /** Retries after a failed attempt. */
  retries?: number
  /**
   * Run index of the change (broken, fixed, newly_flaky); drawn at random when left out, then moved to a revision
   * boundary. A broken test fails its last 5 to 30 runs; a fixed one is clean for its last 45 to 60.
   */
  changeAt?: number
  /** The runner the flakiness lives on (flaky_one_runner); the timeline's first runner by default. */
  runner?: string
}

export interface GeneratedHistory {
  history: TestHistory
  family: Family
  truth: Truth
  p: number
  changeAt: number | null
}

const FLAKY_MESSAGES = [
  (r: () => number) =>
    `Timeout of ${5000 + Math.floor(r() * 3) * 1000}ms exceeded at /builds/app/src/login.test.ts:${40 + Math.floor(r() * 5)}:7`,
  (r: () => number) =>
    `expected 'loading' to equal 'ready' (${new Date(Date.UTC(2025, 0, 1) + Math.floor(r() * 1e9)).toISOString()})`,
  (r: () => number) => `connect ECONNRESET 127.0.0.1:${30000 + Math.floor(r() * 30000)}`,
]
const BROKEN_MESSAGE = 'AssertionError: expected 41 to equal 42 at /builds/app/src/math.test.ts:12:5'
const INFRA_MESSAGE = 'connect ECONNREFUSED 10.0.0.5:5432'

/** One test's history over a timeline, following the family's behaviour. */
export function generateHistory(
  timeline: Timeline,
  index: number,
  opts: FamilyOptions,
  seed = index,
): GeneratedHistory {
  const rng = createRng(seed * 7919 + 17)
  const n = timeline.runs.length
  const { family } = opts
  const p = opts.p ?? 0.3
  const retries = opts.retries ?? 0
  const drawn =
    opts.changeAt ??
    (family === 'broken'
      ? n - 5 - Math.floor(rng() * 26)
      : family === 'fixed'
        ? 40 + Math.floor(rng() * 16)
        : family === 'newly_flaky'
          ? 35 + Math.floor(rng() * 26)
          : null)
  // A change comes with a revision: move it to the first run of the next pipeline, so that no revision both
  // passes and fails because of the change itself.
  let changeAt = drawn
  if (changeAt !== null && opts.changeAt === undefined) {
    const sameRevision = (i: number) => timeline.runs[i]!.revision === timeline.runs[i - 1]!.revision
    while (changeAt > 0 && changeAt < n && sameRevision(changeAt)) changeAt++
  }
  const runner = opts.runner ?? timeline.runs[0]?.runnerId ?? 'ci-1'
  const name = `${family}-${index}`
  const test: TestRef = { testId: `unit::gen.test.ts::${name}`, suite: 'unit', module: 'gen.test.ts', name, file: null }
  const entries: HistoryEntry[] = []
  let burst = false
  const bursts = family === 'bursty_long_gaps' ? longGapBursts(n, rng) : null
  const brokenBranch = family === 'branch_only' ? pickFeatureBranch(timeline, rng) : null
  let brokenBranchFirstRevision: string | null = null
  for (let i = 0; i < n; i++) {
    const run = timeline.runs[i]!
    // A cancelled run never reached about half of the tests.
    if (timeline.cancelled.has(i) && rng() < 0.5) continue
    let q: number
    switch (family) {
      case 'stable':
        q = 0
        break
      case 'broken':
        q = i >= changeAt! ? 1 : 0
        break
      case 'flaky':
        q = p
        break
      case 'flaky_one_runner':
        q = run.runnerId === runner ? p : 0
        break
      case 'bursty':
        burst = burst ? rng() > 0.25 : rng() < 0.06
        q = burst ? 0.6 : 0.01
        break
      case 'fixed':
        q = i < changeAt! ? p : 0
        break
      case 'newly_flaky':
        q = i >= changeAt! ? p : 0
        break
      case 'bursty_long_gaps':
        // The first run of a burst always fails, so that every burst is seen.
        q = bursts![i] === 2 ? 1 : bursts![i] === 1 ? 0.6 : 0
        break
      case 'branch_only':
        q = 0
        // The branch's first revision passes; every later one fails (a commit on the branch broke it).
        if (run.branch === brokenBranch) {
          brokenBranchFirstRevision ??= run.revision
          if (run.revision !== brokenBranchFirstRevision) q = 1
        }
        break
    }
    const infra = timeline.infra.has(i)
    const message = family === 'broken' || family === 'branch_only' ? BROKEN_MESSAGE : null
    entries.push(entry(run, infra ? 1 : q, infra ? 0 : retries, rng, message, infra))
  }
  return { history: { test, entries }, family, truth: TRUTH[family], p: family === 'stable' ? 0 : p, changeAt }
}

/**
 * Burst layout, laid out backwards from the newest run: a clean tail of 0–30 runs, then bursts of 4–8 runs
 * separated by clean gaps of 30–45 runs. 2 marks a burst's first run, 1 the rest of a burst, 0 clean.
 */
function longGapBursts(n: number, rng: () => number): Uint8Array {
  const out = new Uint8Array(n)
  let end = n - Math.floor(rng() * 31)
  while (end > 0) {
    const len = 4 + Math.floor(rng() * 5)
    const start = Math.max(0, end - len)
    for (let i = start; i < end; i++) out[i] = 1
    out[start] = 2
    end = start - 30 - Math.floor(rng() * 16)
  }
  return out
}

/** A feature branch with at least three revisions, where a `branch_only` test breaks after the first. */
function pickFeatureBranch(timeline: Timeline, rng: () => number): string | null {
  const revisions = new Map<string, Set<string | null>>()
  for (const r of timeline.runs) {
    if (!r.branch?.startsWith('feat/')) continue
    const set = revisions.get(r.branch) ?? new Set()
    set.add(r.revision)
    revisions.set(r.branch, set)
  }
  const eligible = [...revisions].filter(([, revs]) => revs.size >= 3).map(([b]) => b)
  return eligible.length === 0 ? null : eligible[Math.floor(rng() * eligible.length)]!
}

/** One result: up to `retries` retries of attempts that fail with probability `q`. */
export function entry(
  run: RunInfo,
  q: number,
  retries: number,
  rng: () => number,
  fixed: string | null,
  infra: boolean,
): HistoryEntry {
  let attempts = 0
  let failedAttempts = 0
  let failedAttemptsMs = 0
  let passed = false
  let durationMs = 0
  while (attempts <= retries) {
    attempts++
    durationMs = 50 + Math.floor(rng() * 100)
    if (q > 0 && rng() < q) {
      failedAttempts++
      failedAttemptsMs += durationMs
    } else {
      passed = true
      break
    }
  }
  const pick = () => FLAKY_MESSAGES[Math.floor(rng() * FLAKY_MESSAGES.length)]!(rng)
  const message = failedAttempts === 0 ? null : infra ? INFRA_MESSAGE : (fixed ?? pick())
  return {
    run,
    status: passed ? 'passed' : 'failed',
    flakyOnRetry: passed && failedAttempts > 0,
    durationMs,
    attempts,
    failedAttempts,
    failedAttemptsMs,
    errorType: failedAttempts > 0 ? 'Error' : null,
    message,
    healingOccurred: false,
  }
}

export interface SuiteOptions extends TimelineOptions {
  tests: number
  /** Relative weights of the families; stable-heavy by default, as real suites are. */
  mix?: Partial<Record<Family, number>>
  retries?: number
}

export interface GeneratedSuite {
  timeline: Timeline
  tests: GeneratedHistory[]
  /** Per-run counts, the input of `infraRunIds`. */
  summaries: { runId: string; total: number; failed: number }[]
}

/** Many tests over one shared timeline, e.g. 10,000 × 100 for the benchmark. */
export function generateSuite(opts: SuiteOptions): GeneratedSuite {
  const timeline = generateTimeline(opts)
  const rng = createRng(opts.seed)
  const mix = opts.mix ?? { stable: 85, flaky: 5, flaky_one_runner: 2, bursty: 2, broken: 2, fixed: 2, newly_flaky: 2 }
  const families = Object.entries(mix) as [Family, number][]
  const totalWeight = families.reduce((s, [, w]) => s + w, 0)
  const tests: GeneratedHistory[] = []
  for (let i = 0; i < opts.tests; i++) {
    let pick = rng() * totalWeight
    let family: Family = families[0]![0]
    for (const [f, w] of families) {
      if ((pick -= w) < 0) {
        family = f
        break
      }
    }
    const p = family === 'flaky' ? 0.02 + rng() * 0.48 : 0.2 + rng() * 0.3
    tests.push(generateHistory(timeline, i, { family, p, retries: opts.retries ?? 0 }, opts.seed * 100_003 + i))
  }
  // Per run, from the entries (a cancelled run lacks some tests).
  const counts = new Map(timeline.runs.map((r) => [r.runId, { runId: r.runId, total: 0, failed: 0 }]))
  for (const t of tests) {
    for (const e of t.history.entries) {
      const c = counts.get(e.run.runId)!
      c.total++
      if (e.status === 'failed') c.failed++
    }
  }
  const summaries = [...counts.values()]
  return { timeline, tests, summaries }
}

function hex(x: number): string {
  return (Math.abs(Math.floor(x)) % 0xffffffff).toString(16).padStart(8, '0') + 'c0ffee'
}
