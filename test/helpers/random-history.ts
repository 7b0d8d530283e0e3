import { makeTestId, type Result, type ResultStatus, type RunMeta } from '../../src/model.js'
import { toRunMeta } from '../../src/pipeline/run-context.js'

export const DAY = 86_400_000
export const T0 = Date.UTC(2026, 0, 1)

/** A small seeded generator (mulberry32), so that a failing seed can be run again. */
export function random(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  }
}

export type Rand = ReturnType<typeof random>

export interface Upload {
  run: RunMeta
  results: Result[]
  replace: boolean
}

/**
 * A random history: a few files of a few tests each, runs spread over two months (so that every window loses
 * results as the clock moves), on two branches and two runners, some infrastructure failures, tests of every
 * temper, execution positions, and reports that merge into (or replace) a run already stored.
 */
export function randomUploads(rand: Rand): Upload[] {
  const files = Array.from({ length: rand.int(1, 3) }, (_, f) => `src/f${f}.test.ts`)
  const tests = files.flatMap((file) =>
    Array.from({ length: rand.int(1, 4) }, (_, i) => ({
      file,
      name: `t${i}`,
      failRate: rand.pick([0, 0, 0.05, 0.3, 0.6, 1]),
      flaky: rand.chance(0.3),
    })),
  )
  const uploads: Upload[] = []
  const runs = rand.int(3, 30)
  for (let r = 0; r < runs; r++) {
    const at = T0 + rand.int(0, 60 * DAY)
    const infra = rand.chance(0.08)
    const run = toRunMeta(`run-${r}`, 'unit', {
      branch: rand.pick(['main', 'main', 'feature']),
      revision: `rev${rand.int(0, Math.max(1, runs >> 2))}`,
      startedAt: new Date(at).toISOString(),
      jobStatus: rand.pick([null, 'success', 'failed']),
      runnerId: rand.pick(['a', 'b']),
      env: rand.chance(0.3) ? { os: rand.pick(['linux', 'mac']) } : {},
    })
    const chosen = tests.filter(() => rand.chance(0.85))
    const order = [...chosen].sort(() => rand.next() - 0.5)
    const results = chosen.map((t): Result => {
      const failed = infra ? rand.chance(0.95) : rand.chance(t.failRate)
      const flakyOnRetry = !failed && t.flaky && rand.chance(0.3)
      const status: ResultStatus = failed
        ? rand.pick(['failed', 'failed', 'error'])
        : rand.chance(0.05)
          ? 'skipped'
          : 'passed'
      return {
        test: { testId: makeTestId('unit', t.file, t.name), suite: 'unit', module: t.file, name: t.name, file: t.file },
        status,
        flakyOnRetry,
        durationMs: rand.int(1, 500),
        errorType: failed ? rand.pick(['AssertionError', 'TimeoutError']) : null,
        message: failed ? rand.pick(['expected 1 to be 2', 'timeout after 5000ms', `boom ${rand.int(0, 3)}`]) : null,
        healingOccurred: rand.chance(0.02),
        attempts: flakyOnRetry
          ? [
              { retry: 0, status: 'failed', durationMs: 5, message: 'timeout', stack: null },
              { retry: 1, status: 'passed', durationMs: 5, message: null, stack: null },
            ]
          : [],
        position: rand.chance(0.9) ? order.indexOf(t) : null,
      }
    })
    // Some runs arrive as two reports: the second merges into the first, or replaces part of it.
    if (results.length > 1 && rand.chance(0.25)) {
      const cut = rand.int(1, results.length - 1)
      uploads.push({ run, results: results.slice(0, cut), replace: false })
      uploads.push({ run: { ...run, jobStatus: 'success' }, results: results.slice(cut), replace: false })
    } else uploads.push({ run, results, replace: false })
    if (rand.chance(0.1)) uploads.push({ run, results: results.slice(0, 1), replace: true })
  }
  return uploads.sort(() => rand.next() - 0.5)
}
