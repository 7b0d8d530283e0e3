// One vocabulary (issue 14): the verdict, the flip-rate class and the pass-rate class each have one name, and the
// same value for the same test in JSON, the dashboard's rows, the CSV and the bundle; the CLI table and `show` print
// that value's word (test-story.ts), as the dashboard does.
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Io } from '../../src/cli/output.js'
import { analyze, printAnalyze, printShow, show } from '../../src/cli/commands/analyze.js'
import { analysesToCsv } from '../../src/export/analysis-csv.js'
import { leaderboardRowBase } from '../../src/server/to-json.js'
import { FLIP_RATE_CLASS_LABEL, PASS_RATE_CLASS_LABEL, VERDICT_LABEL } from '../../src/test-story.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { collector, exportBundle, tempDir } from '../export/helpers.js'
import { batch, result, runMeta } from '../helpers/builders.js'

const tmp = tempDir('fw-vocabulary-')
afterAll(tmp.cleanup)

function fakeIo(): { io: Io; out: () => string } {
  const stdout = collector()
  return { io: { stdout, stderr: collector(), env: {} }, out: () => stdout.text() }
}

describe('one vocabulary', () => {
  it('names and values agree across the CLI table, JSON, show, dashboard rows, CSV and bundle', async () => {
    const db = join(tmp.dir, 'v.db')
    const store = await openSqliteStore(db)
    // Weeks old on purpose: every surface must use the same as-of time, not the wall clock.
    const start = Date.parse('2025-06-01T00:00:00Z')
    for (let i = 0; i < 12; i++) {
      const run = runMeta(`r${i}`, new Date(start + i * 86_400_000).toISOString(), { revision: `rev${i >> 1}` })
      await store.ingestReport(
        batch(run, [
          result('wobbly', i % 2 ? 'failed' : 'passed'),
          result('broken', i < 4 ? 'passed' : 'failed'),
          result('steady', 'passed'),
        ]),
      )
    }
    const bundle = JSON.parse((await exportBundle(store, { classification: 'verdict' })).text) as {
      tests: { name: string; overall: { verdict?: string } }[]
    }
    await store.close()

    const list = await analyze({ db }, fakeIo().io)
    const table = fakeIo()
    await printAnalyze(list, { db }, table.io)
    const header = table.out().split('\n')[0]!
    expect(header).toContain('flip-rate class')
    expect(header).toContain('verdict')
    expect(header).not.toMatch(/\bclass\b(?<!rate class)/)

    const json = fakeIo()
    await printAnalyze(list, { db, json: true }, json.io)
    const rows = JSON.parse(json.out()) as Record<string, unknown>[]
    const csv = analysesToCsv(list).trim().split('\n')
    const csvHead = csv[0]!.split(',')
    for (const a of list) {
      const j = rows.find((r) => r.test_id === a.testId)!
      expect(j).toMatchObject({
        verdict: a.verdict,
        flip_rate_class: a.flipRateClass,
        pass_rate_class: a.passRateClass,
      })
      expect(j).not.toHaveProperty('classification')
      const dash = leaderboardRowBase(a)
      expect(dash).toMatchObject({
        verdict: a.verdict,
        flip_rate_class: a.flipRateClass,
        pass_rate_class: a.passRateClass,
      })
      const line = csv.find((l) => l.startsWith(`${a.testId},`))!.split(',')
      expect(line[csvHead.indexOf('verdict')]).toBe(a.verdict)
      expect(line[csvHead.indexOf('flip_rate_class')]).toBe(a.flipRateClass)
      expect(line[csvHead.indexOf('pass_rate_class')]).toBe(a.passRateClass)

      const shown = await show(a.testId, { db }, fakeIo().io)
      expect(shown.analysis.verdict).toBe(a.verdict)
      const text = fakeIo()
      printShow(shown, { db }, text.io)
      // People read each value's word (test-story.ts), the same on every surface.
      expect(text.out()).toContain(`verdict: ${VERDICT_LABEL[a.verdict]}`)
      expect(text.out()).toContain(`flip-rate class ${FLIP_RATE_CLASS_LABEL[a.flipRateClass]}`)
      expect(text.out()).toContain(`pass-rate class ${PASS_RATE_CLASS_LABEL[a.passRateClass]}`)
      expect(text.out()).not.toContain('GitLabViz class')
      const b = bundle.tests.find((t) => t.name === a.test.name)!
      expect(b.overall.verdict).toBe(a.verdict)
    }
    expect(list.find((a) => a.test.name === 'broken')!.verdict).toBe('broken')
    expect(list.find((a) => a.test.name === 'wobbly')!.verdict).toBe('flaky')
  })
})
