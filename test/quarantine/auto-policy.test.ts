// `quarantine auto` against issue 14: one clock with `analyze`, no churn, harm ordering under the cap.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { analyzeTest, infraRunIds, resolveAnalysisConfig } from '../../src/analysis/index.js'
import { DEFAULTS } from '../../src/config/defaults.js'
import { loadConfig } from '../../src/config/load.js'
import { analyzeStore } from '../../src/pipeline/analyze-store.js'
import { policyTest, policyTestsFromStore } from '../../src/quarantine/from-analysis.js'
import { createQuarantineManager } from '../../src/quarantine/manager.js'
import { decideQuarantine, type PolicyTest } from '../../src/quarantine/policy.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { QuarantineRecord } from '../../src/store/store.js'
import { generateSuite } from '../analysis/generate.js'
import { history } from '../analysis/builders.js'
import { batch, result, runMeta } from '../helpers/builders.js'

const policy = { ...DEFAULTS.quarantine, maxQuarantined: 1000 }
const now = Date.parse('2026-03-01T00:00:00Z')
const cfg = resolveAnalysisConfig()

function record(testId: string): QuarantineRecord {
  return {
    testId,
    reason: 'auto',
    owner: null,
    issueUrl: null,
    createdAt: '2026-02-01T00:00:00Z',
    createdBy: 'flakewatch',
    expiresAt: '2026-04-01T00:00:00Z',
    source: 'auto',
  }
}

/** Applies a decision to the records, as the manager does. */
function apply(records: QuarantineRecord[], d: ReturnType<typeof decideQuarantine>): QuarantineRecord[] {
  const out = new Map(records.map((r) => [r.testId, r]))
  for (const r of [...d.release, ...d.expire]) out.delete(r.testId)
  for (const q of d.quarantine) out.set(q.testId, record(q.testId))
  return [...out.values()]
}

describe('quarantine auto: no churn', () => {
  it('quarantines a flaky test whose clean streak has not earned a fix, and not one whose streak has', () => {
    // Proven flaky (3 passes on retry in 13 runs), then 12 clean passes: "10 passes in a row" used to keep it out,
    // though a test still failing at that rate has 12 clean runs by chance often. The verdict stays flaky (with
    // a maybe_fixed hint) until the streak is improbable and, its failures spanning 11 runs (one short episode),
    // 220 runs have passed since the first: then it is healthy and neither enters nor stays.
    const pattern = '..R.....R...R'
    const early = history('unit::m.test.ts::calm', 2 * 3_600_000).seq(pattern + '.'.repeat(12))
    const t = policyTest(analyzeTest(early.build(), cfg, { now: early.now }))
    expect(t.verdict).toBe('flaky')
    expect(decideQuarantine([t], [], policy, now).quarantine.map((q) => q.testId)).toEqual(['unit::m.test.ts::calm'])
    const almost = history('unit::m.test.ts::calm', 2 * 3_600_000).seq(pattern + '.'.repeat(208))
    expect(policyTest(analyzeTest(almost.build(), cfg, { now: almost.now })).verdict).toBe('flaky')
    const later = history('unit::m.test.ts::calm', 2 * 3_600_000).seq(pattern + '.'.repeat(209))
    const fixed = policyTest(analyzeTest(later.build(), cfg, { now: later.now }))
    expect(fixed.verdict).toBe('healthy')
    expect(decideQuarantine([fixed], [], policy, now).quarantine).toEqual([])
    expect(decideQuarantine([fixed], [record(fixed.testId)], policy, now).release).toEqual([
      { testId: fixed.testId, reason: expect.stringMatching(/^fixed: no failures in the last 209 runs/) },
    ])
  })

  it('changes nothing when applied twice without new data, on a realistic suite', () => {
    const suite = generateSuite({ seed: 7, tests: 400, runs: 100, jobsPerRevision: 2, infraRuns: 2 })
    const excludedRuns = infraRunIds(suite.summaries, cfg)
    const tests = suite.tests.map((g) =>
      policyTest(analyzeTest(g.history, cfg, { now: suite.timeline.now, excludedRuns })),
    )
    const first = decideQuarantine(tests, [], policy, now)
    expect(first.quarantine.length).toBeGreaterThan(10)
    let records = apply([], first)
    for (let i = 0; i < 3; i++) {
      const again = decideQuarantine(tests, records, policy, now)
      expect([again.quarantine, again.release, again.expire]).toEqual([[], [], []])
      records = apply(records, again)
    }
    // And the recommendation says quarantine exactly for the tests the policy quarantined.
    const recommended = suite.tests
      .map((g) => analyzeTest(g.history, cfg, { now: suite.timeline.now, excludedRuns }))
      .filter((a) => a.recommendation.action === 'quarantine')
      .map((a) => a.testId)
      .sort()
    expect(recommended).toEqual(first.quarantine.map((q) => q.testId).sort())
  })

  it('chooses by harm under the cap and lists the rest', () => {
    const t = (testId: string, extra: Partial<PolicyTest>): PolicyTest => ({
      testId,
      verdict: 'flaky',
      classification: 'flaky',
      score: 0.5,
      confidence: 0.9,
      proven: true,
      trailingPasses: 0,
      reason: 'r',
      ...extra,
    })
    const d = decideQuarantine(
      [
        t('high-score-cheap', { score: 0.95, timeLostMs: 1_000, failures: 3 }),
        t('costly', { score: 0.3, timeLostMs: 600_000, failures: 4 }),
        t('frequent', { score: 0.3, timeLostMs: 1_000, failures: 20 }),
        t('recent', { score: 0.3, timeLostMs: 1_000, failures: 3, lastFailureAt: now }),
      ],
      [],
      { ...policy, maxQuarantined: 2 },
      now,
    )
    expect(d.quarantine.map((q) => q.testId)).toEqual(['costly', 'frequent'])
    expect(d.overCap.map((q) => q.testId)).toEqual(['recent', 'high-score-cheap'])
  })
})

describe('quarantine auto: one clock with analyze', () => {
  it('judges a store whose newest run is weeks old as analyze does', async () => {
    const store = await openSqliteStore(join(mkdtempSync(join(tmpdir(), 'fw-auto-')), 'a.db'))
    try {
      // 20 runs, a day apart, ending 40 days ago: "flaky" fails every third run on revisions that also passed.
      const start = Date.now() - 60 * 86_400_000
      for (let i = 0; i < 20; i++) {
        const run = runMeta(`r${i}`, new Date(start + i * 86_400_000).toISOString(), { revision: `rev${i >> 1}` })
        await store.ingestReport(
          batch(run, [result('flaky', i % 3 === 0 ? 'failed' : 'passed'), result('steady', 'passed')]),
        )
      }
      const config = loadConfig({ env: {} })
      const analyzed = await analyzeStore(store, {})
      expect(analyzed.find((a) => a.testId === 'unit::mod::flaky')!.verdict).toBe('flaky')
      const tests = await policyTestsFromStore(store, config)
      expect(tests.map((t) => [t.testId, t.verdict])).toEqual(analyzed.map((a) => [a.testId, a.verdict]))
      const manager = createQuarantineManager({
        store,
        policy: config.quarantine,
        analyze: () => policyTestsFromStore(store, config),
      })
      const dry = await manager.autoUpdate({ actor: 'flakewatch', dryRun: true })
      expect(dry.quarantined.map((q) => q.testId)).toEqual(['unit::mod::flaky'])
      // Applied twice: the second time changes nothing.
      await manager.autoUpdate({ actor: 'flakewatch' })
      const second = await manager.autoUpdate({ actor: 'flakewatch' })
      expect([second.quarantined, second.unquarantined, second.expired]).toEqual([[], [], []])
    } finally {
      await store.close()
    }
  })
})
