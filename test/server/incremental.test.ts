import { describe, expect, it } from 'vitest'
import { resolveAnalysisConfig } from '../../src/analysis/index.js'
import { makeTestId, type Result, type RunMeta } from '../../src/model.js'
import type { Selection } from '../../src/server/selection.js'
import { applyDelta, buildSnapshot, deltaBaseOf, heatOf, snapshotDelta } from '../../src/server/snapshot.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { ReportBatch } from '../../src/store/store.js'
import { createRng } from '../analysis/generate.js'
import { batch, flakyResult, result, runMeta } from '../helpers/builders.js'
import { comparable } from './comparable.js'

const DAY = 86_400_000
const START = Date.UTC(2026, 2, 1)

/**
 * A random history as reports in upload order: two suites, a few branches, revisions shared by neighbouring runs
 * (so one revision can pass and fail), flaky retries, skips and errors, infrastructure-failure runs, a run that a
 * second report extends, and reports uploaded out of time order.
 */
function randomReports(seed: number): ReportBatch[] {
  const rnd = createRng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
  const tests = Array.from({ length: 4 + Math.floor(rnd() * 10) }, (_, i) => ({
    name: `t${i}`,
    suite: i % 3 === 0 ? 'api' : 'unit',
    // Each test has its own character: stable, flaky, breaking at some point.
    module: i === 1 || i === 4 ? 'a.test.ts' : pick(['a.test.ts', 'b.test.ts']),
    failRate: i === 4 ? 0 : pick([0, 0, 0.05, 0.3, 0.6]),
    breaksAt: i !== 4 && rnd() < 0.2 ? Math.floor(rnd() * 30) : Infinity,
    polluter: i === 1,
    victim: i === 4,
  }))
  const reports: ReportBatch[] = []
  const runs = 12 + Math.floor(rnd() * 20)
  for (let r = 0; r < runs; r++) {
    // Mostly in time order, sometimes an old report arrives late.
    const at = START + (r + (rnd() < 0.15 ? -3 - rnd() * 5 : rnd())) * DAY * 0.7
    const suite = pick(['unit', 'api'])
    const infra = rnd() < 0.08
    const run: RunMeta = runMeta(`r${r}`, new Date(at).toISOString(), {
      suite,
      branch: pick(['main', 'main', 'main', 'feature/x']),
      revision: `rev${Math.floor(r / 2)}`,
      env: { os: pick(['linux', 'windows']) },
    })
    const results: Result[] = []
    // Tests run in a shuffled order, and one test fails when it runs after its polluter: order hints can fire.
    const order = tests.map((t) => ({ t, key: rnd() })).sort((a, b) => a.key - b.key)
    let polluted = false
    for (const [position, { t }] of order.entries()) {
      if (t.suite !== suite || rnd() < 0.1) continue
      const fails = infra || r >= t.breaksAt || rnd() < t.failRate || (t.victim && polluted)
      if (t.polluter) polluted = true
      const module = t.module
      const test = { testId: makeTestId(suite, module, t.name), suite, module, name: t.name, file: null }
      const where = { position, test }
      if (rnd() < 0.05) results.push(result(t.name, 'skipped', where, suite))
      else if (fails && rnd() < 0.3) results.push({ ...flakyResult(t.name, suite), ...where })
      else results.push(result(t.name, fails ? pick(['failed', 'failed', 'error'] as const) : 'passed', where, suite))
    }
    // Some jobs upload their results in two reports of one run.
    if (results.length > 2 && rnd() < 0.15) {
      const half = Math.floor(results.length / 2)
      reports.push(batch(run, results.slice(0, half)), batch(run, results.slice(half), `${run.runId}-second`))
    } else reports.push(batch(run, results))
  }
  return reports
}

const SELECTIONS: Selection[] = [
  { env: [] },
  { env: [], suite: 'unit' },
  { env: [], branch: 'main' },
  { env: [['os', 'linux']] },
  { env: [], last: 6 },
]

describe('incremental analysis', () => {
  const cfg = resolveAnalysisConfig({ infra: { failedShare: 0.8, minTests: 3 } })

  it('equals a full analysis at the same clock, after every upload, on random histories', async () => {
    let updates = 0
    let fallbacks = 0
    for (let seed = 1; seed <= 8; seed++) {
      const reports = randomReports(seed)
      const store = await openSqliteStore(':memory:')
      try {
        const first = Math.max(1, Math.floor(reports.length / 3))
        for (const r of reports.slice(0, first)) await store.ingestReport(r)
        const snapshots = await Promise.all(SELECTIONS.map((sel) => buildSnapshot(store, sel, { cfg })))
        for (const report of reports.slice(first)) {
          await store.ingestReport(report)
          const written = report.runs.map((r) => r.run.runId)
          for (let i = 0; i < SELECTIONS.length; i++) {
            const sel = SELECTIONS[i]!
            const before = snapshots[i]!
            const delta = await snapshotDelta(store, sel, deltaBaseOf(before), written, cfg)
            const full = await buildSnapshot(store, sel, { cfg, now: before.now })
            if (delta === null) {
              fallbacks++
              snapshots[i] = full
              continue
            }
            updates++
            const incremental = applyDelta(before, delta)
            expect(comparable(incremental), `seed ${seed}, ${JSON.stringify(sel)}, after ${written[0]}`).toEqual(
              comparable(full),
            )
            // Only the tests of the written runs (and runs that left the selection) were read again.
            expect(delta.touched.length).toBeLessThanOrEqual((await store.stats()).tests)
            snapshots[i] = incremental
          }
        }
      } finally {
        await store.close()
      }
    }
    // Almost every update is incremental; a full rebuild is the rare exception, not the rule.
    expect(updates).toBeGreaterThan(fallbacks * 10)
  }, 120_000)

  it('reads again only the tests the written run touched, and their files', async () => {
    const store = await openSqliteStore(':memory:')
    try {
      // Fifty tests in ten files.
      const inFile = (name: string, status: 'passed' | 'failed', module: string) => {
        const test = { testId: makeTestId('unit', module, name), suite: 'unit', module, name, file: null }
        return result(name, status, { test })
      }
      const names = Array.from({ length: 50 }, (_, i) => `t${i}`)
      for (let r = 0; r < 5; r++) {
        const run = runMeta(`r${r}`, new Date(START + r * DAY).toISOString())
        await store.ingestReport(
          batch(
            run,
            names.map((n, i) => inFile(n, 'passed', `m${i % 10}`)),
          ),
        )
      }
      const cfg0 = resolveAnalysisConfig()
      const snap = await buildSnapshot(store, { env: [] }, { cfg: cfg0 })
      const run = runMeta('r5', new Date(START + 5 * DAY).toISOString())
      await store.ingestReport(batch(run, [inFile('t3', 'failed', 'm3'), inFile('new', 'passed', 'z')]))
      const delta = await snapshotDelta(store, { env: [] }, deltaBaseOf(snap), ['r5'], cfg0)
      // The written tests, and the other tests of their files (an order hint compares the tests of one file).
      const m3 = ['t13', 't23', 't3', 't33', 't43'].map((n) => `unit::m3::${n}`)
      expect(delta!.touched.sort()).toEqual([...m3, 'unit::z::new'])
      const after = applyDelta(snap, delta!)
      expect(after.tests).toHaveLength(51)
      const heat = (testId: string) => heatOf(after, after.byId.get(testId)!)
      expect(heat('unit::m3::t3')).toBe('PPPPPF')
      expect(heat('unit::m7::t7')).toBe('PPPPP.')
      expect(heat('unit::z::new')).toBe('.....P')
    } finally {
      await store.close()
    }
  })
})
