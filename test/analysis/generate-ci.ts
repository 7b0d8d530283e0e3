/**
 * Generated CI histories for the end-to-end evaluation of detection, fixes and quarantine (issue 27): one shared
 * timeline of runs (a rarely used runner, a numeric `workers` facet, every hour of the day), and tests of ten
 * classes with a known truth. Seeds and class mixes the code was not tuned on are the point: the evaluation test
 * draws held-out seeds. Pure TypeScript, no test-runner imports.
 */
import type { RunInfo, TestHistory } from '../../src/model.js'
import { createRng, entry, type Truth } from './generate.js'

export type CiTruth = Truth

/**
 * The classes and their truth. `broken_then_fixed` fails every run of one stretch and passes otherwise: one
 * episode, healthy now. `fixed_for_real` is flaky until its fix and clean for at least `FIXED_MIN_AFTER` runs
 * since: healthy, once the clean stretch has earned it (the evaluation checks that it has, within that bound).
 */
export const CI_TRUTH = {
  stable: 'healthy',
  broken: 'broken',
  broken_then_fixed: 'healthy',
  low_rate: 'flaky',
  random: 'flaky',
  rare_runner: 'flaky',
  bursty: 'flaky',
  time_window: 'flaky',
  workers: 'flaky',
  fixed_for_real: 'healthy',
  // The harder classes of issue 27 (weight 0 in the default mix, so the default histories stay as they were).
  rare_runner_few: 'flaky',
  workers_low_rate: 'flaky',
  bursty_long_gaps: 'flaky',
  window_straddling: 'flaky',
} as const satisfies Record<string, Truth>

export type CiClass = keyof typeof CI_TRUTH

export const CI_CLASSES = Object.keys(CI_TRUTH) as CiClass[]

/** The default mix: stable-heavy, as real suites are, with every flaky class present. */
export const DEFAULT_CI_MIX: Record<CiClass, number> = {
  stable: 50,
  broken: 4,
  broken_then_fixed: 4,
  low_rate: 8,
  random: 8,
  rare_runner: 5,
  bursty: 5,
  time_window: 5,
  workers: 5,
  fixed_for_real: 6,
  rare_runner_few: 0,
  workers_low_rate: 0,
  bursty_long_gaps: 0,
  window_straddling: 0,
}

/**
 * The harder mix: flakes at 2–5%, a rare runner that fails a test only 10–30% of its runs there (a handful of
 * failures in a history), worker-count flakes at 5–15%, bursts of 4–10 runs 80–200 runs apart, and time windows
 * that straddle the 6-hour boundaries (00:00, 06:00, 12:00, 18:00) the old buckets used.
 */
export const HARD_CI_MIX: Record<CiClass, number> = {
  stable: 40,
  broken: 4,
  broken_then_fixed: 4,
  low_rate: 12,
  random: 4,
  rare_runner: 3,
  bursty: 3,
  time_window: 3,
  workers: 3,
  fixed_for_real: 6,
  rare_runner_few: 6,
  workers_low_rate: 6,
  bursty_long_gaps: 6,
  window_straddling: 6,
}

/** Failure rate ranges, under the class's condition (on the runner, in the window, in a burst, …). */
const RATES: Record<CiClass, [number, number]> = {
  stable: [0, 0],
  broken: [1, 1],
  broken_then_fixed: [1, 1],
  low_rate: [0.02, 0.05],
  random: [0.05, 0.4],
  rare_runner: [0.3, 0.8],
  bursty: [0.3, 0.8],
  time_window: [0.3, 0.8],
  workers: [0.2, 0.6],
  fixed_for_real: [0.1, 0.4],
  rare_runner_few: [0.1, 0.3],
  workers_low_rate: [0.05, 0.15],
  bursty_long_gaps: [0.3, 0.8],
  window_straddling: [0.3, 0.8],
}

const HOUR = 3_600_000
export const RARE_RUNNER = 'gh-ubuntu-2204-rare'
const COMMON_RUNNERS = Array.from({ length: 8 }, (_, i) => `gh-ubuntu-2204-0${i + 1}`)
/** The rare runner's weight against 1 for each common one, by default: about 8% of the runs. */
const RARE_WEIGHT = 0.7
export const WORKERS = ['1', '2', '4', '8']
/** A real fix leaves at least this many runs after it, the bound within which it must be released. */
export const FIXED_MIN_AFTER = 220

export interface CiTest {
  history: TestHistory
  cls: CiClass
  truth: CiTruth
  /** What a right hint names. */
  runner?: string
  /** The failure window: first UTC hour and width in hours. */
  window?: { fromHour: number; hours: number }
  /** Failures happen at `workers` ≥ this. */
  workersAtLeast?: number
  /** Indices of the runs inside bursts. */
  burstRuns?: Set<number>
  /** Run index of the fix (fixed_for_real, broken_then_fixed) or breakage (broken). */
  changeAt?: number
}

export interface CiSuite {
  runs: RunInfo[]
  tests: CiTest[]
  now: number
}

export interface CiSuiteOptions {
  seed: number
  tests: number
  /** About 80 minutes apart: 500 runs span 28 days, inside the default 30-day lookback. */
  runs?: number
  mix?: Partial<Record<CiClass, number>>
  /** Jobs per revision: 2 gives same-revision proof, 1 leaves only statistics. */
  jobsPerRevision?: number
  /** Retries after a failed attempt. */
  retries?: number
  /** The rare runner's weight against 1 for each of the 8 common ones (default 0.7, about 8% of the runs). */
  rareWeight?: number
}

/** A seeded suite: the same options give the same histories. */
export function generateCiSuite(opts: CiSuiteOptions): CiSuite {
  const rng = createRng(opts.seed * 2_654_435_761 + 11)
  const count = opts.runs ?? 500
  const jobs = opts.jobsPerRevision ?? 2
  const runs: RunInfo[] = []
  let at = Date.UTC(2025, 2, 1) + Math.floor(rng() * 24) * HOUR
  const totalWeight = COMMON_RUNNERS.length + (opts.rareWeight ?? RARE_WEIGHT)
  for (let i = 0; i < count; i++) {
    at += 50 * 60_000 + Math.floor(rng() * 60 * 60_000)
    const pick = rng() * totalWeight
    const runnerId = pick >= COMMON_RUNNERS.length ? RARE_RUNNER : COMMON_RUNNERS[Math.floor(pick)]!
    const pipeline = Math.floor(i / jobs)
    runs.push({
      runId: `ci${opts.seed}-${i}`,
      suite: 'unit',
      at,
      branch: 'main',
      revision: `rev${opts.seed}-${pipeline}`,
      pipelineId: `p${pipeline}`,
      jobStatus: 'success',
      pipelineStatus: 'success',
      runnerId,
      env: { workers: WORKERS[Math.floor(rng() * WORKERS.length)]! },
      status: 'complete',
      pipelineUrl: null,
      artifactsUrl: null,
    })
  }
  const mix = Object.entries({ ...DEFAULT_CI_MIX, ...opts.mix }).filter(([, w]) => w > 0) as [CiClass, number][]
  const total = mix.reduce((s, [, w]) => s + w, 0)
  const tests: CiTest[] = []
  for (let t = 0; t < opts.tests; t++) {
    let pick = rng() * total
    let cls = mix[0]![0]
    for (const [c, w] of mix) {
      if ((pick -= w) < 0) {
        cls = c
        break
      }
    }
    tests.push(generateCiTest(runs, cls, t, createRng(opts.seed * 1_000_003 + t * 7919), opts.retries ?? 0))
  }
  return { runs, tests, now: at + HOUR }
}

function generateCiTest(runs: RunInfo[], cls: CiClass, index: number, rng: () => number, retries: number): CiTest {
  const n = runs.length
  const name = `${cls}-${index}`
  const out: CiTest = {
    history: {
      test: { testId: `unit::ci.test.ts::${name}`, suite: 'unit', module: 'ci.test.ts', name, file: null },
      entries: [],
    },
    cls,
    truth: CI_TRUTH[cls],
  }
  const [lo, hi] = RATES[cls]
  const p = lo + rng() * (hi - lo)
  // A change comes with a new revision, so that no revision both passes and fails because of it.
  const atRevision = (i: number) => {
    while (i > 0 && i < n && runs[i]!.revision === runs[i - 1]!.revision) i++
    return i
  }
  if (cls === 'broken') out.changeAt = atRevision(n - 5 - Math.floor(rng() * 36))
  if (cls === 'broken_then_fixed') out.changeAt = atRevision(60 + Math.floor(rng() * (n - 200)))
  if (cls === 'fixed_for_real')
    out.changeAt = atRevision(120 + Math.floor(rng() * Math.max(1, n - 120 - FIXED_MIN_AFTER - 2)))
  // The fix of a breakage is a revision too.
  const brokenEnd = out.changeAt === undefined ? 0 : atRevision(out.changeAt + 5 + Math.floor(rng() * 16))
  if (cls === 'rare_runner' || cls === 'rare_runner_few') out.runner = RARE_RUNNER
  if (cls === 'time_window') out.window = { fromHour: Math.floor(rng() * 24), hours: 2 + Math.floor(rng() * 7) }
  if (cls === 'window_straddling') {
    // 2–8 hours across a 6-hour boundary: it starts 1 to hours − 1 hours before 00:00, 06:00, 12:00 or 18:00.
    const hours = 2 + Math.floor(rng() * 7)
    const boundary = 6 * Math.floor(rng() * 4)
    out.window = { fromHour: (boundary - 1 - Math.floor(rng() * (hours - 1)) + 24) % 24, hours }
  }
  if (cls === 'workers' || cls === 'workers_low_rate') out.workersAtLeast = rng() < 0.5 ? 4 : 8
  if (cls === 'bursty') out.burstRuns = bursts(n, rng)
  if (cls === 'bursty_long_gaps') out.burstRuns = bursts(n, rng, { min: 4, spread: 7, gapMin: 80, gapSpread: 121 })
  for (let i = 0; i < n; i++) {
    const run = runs[i]!
    let q = 0
    switch (cls) {
      case 'stable':
        break
      case 'broken':
        q = i >= out.changeAt! ? 1 : 0
        break
      case 'broken_then_fixed':
        q = i >= out.changeAt! && i < brokenEnd ? 1 : 0
        break
      case 'low_rate':
      case 'random':
        q = p
        break
      case 'fixed_for_real':
        q = i < out.changeAt! ? p : 0
        break
      case 'rare_runner':
      case 'rare_runner_few':
        q = run.runnerId === RARE_RUNNER ? p : 0
        break
      case 'time_window':
      case 'window_straddling': {
        const hour = new Date(run.at).getUTCHours()
        q = (hour - out.window!.fromHour + 24) % 24 < out.window!.hours ? p : 0
        break
      }
      case 'workers':
      case 'workers_low_rate':
        q = Number(run.env.workers) >= out.workersAtLeast! ? p : 0
        break
      case 'bursty':
      case 'bursty_long_gaps':
        q = out.burstRuns!.has(i) ? p : 0
        break
    }
    const tries = cls === 'broken' || cls === 'broken_then_fixed' ? 0 : retries
    out.history.entries.push(entry(run, q, tries, rng, 'expected true to be false', false))
  }
  return out
}

interface BurstShape {
  min: number
  spread: number
  gapMin: number
  gapSpread: number
}

/**
 * Bursts of 6–14 runs separated by quiet gaps of 40–110 runs (or another shape), laid out backwards from the
 * newest run with a quiet tail shorter than the shortest gap: the test is still bursty at the end.
 */
function bursts(
  n: number,
  rng: () => number,
  shape: BurstShape = { min: 6, spread: 9, gapMin: 40, gapSpread: 71 },
): Set<number> {
  const out = new Set<number>()
  let end = n - Math.floor(rng() * shape.gapMin)
  while (end > 0) {
    const len = shape.min + Math.floor(rng() * shape.spread)
    for (let i = Math.max(0, end - len); i < end; i++) out.add(i)
    end = end - len - shape.gapMin - Math.floor(rng() * shape.gapSpread)
  }
  return out
}
