import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { readJobResults } from '../../src/cli/commands/gate.js'
import { ingestFiles } from '../../src/pipeline/ingest-files.js'
import { toRunMeta } from '../../src/pipeline/run-context.js'
import { formatQuarantineFile } from '../../src/quarantine/file.js'
import FlakewatchJestReporter from '../../src/reporters/jest.js'
import type { JestAggregatedResult, JestFileResult } from '../../src/reporters/jest-cases.js'
import { decideQuarantine, loadQuarantines } from '../../src/reporters/quarantine.js'
import { openStore } from '../../src/store/open.js'
import type { QuarantineRecord, RunBatch, Store } from '../../src/store/store.js'
import { ROOT, testdir } from '../helpers/run-cli.js'

/**
 * Issue 27, item 5: the reporters' own quarantine check at the end of a run matches a test to its quarantine
 * whatever name the quarantine was set under: real reports of one Jest run and one Playwright run (test/fixtures).
 */
const FIXTURES = join(ROOT, 'test/fixtures/reports/identity')
type JestJson = Omit<JestAggregatedResult, 'testResults'> & {
  testResults: (Omit<JestFileResult, 'testFilePath' | 'testResults'> & {
    name: string
    assertionResults: JestFileResult['testResults']
  })[]
}

const sink = new Writable({ write: (_chunk, _enc, done) => done() })
const silent = { stdout: sink, stderr: sink, env: {} }

function record(testId: string): QuarantineRecord {
  return {
    testId,
    reason: 'flaky',
    owner: null,
    issueUrl: null,
    createdAt: '2026-11-01T00:00:00Z',
    createdBy: 'ana',
    expiresAt: null,
    source: 'manual',
  }
}

async function seeded(db: string, suite: string, report: string, quarantined: RegExp): Promise<string[]> {
  const store = await openStore({ db })
  try {
    const summary = await ingestFiles({ store, inputs: [join(FIXTURES, report)], context: { suite } })
    expect(summary.failed).toEqual([])
    const ids = (await store.listTests()).map((t) => t.testId).filter((id) => quarantined.test(id))
    for (const id of ids) await quarantine(store, id)
    return ids
  } finally {
    await store.close()
  }
}

const quarantine = (store: Store, id: string) =>
  store.putQuarantine(record(id), {
    action: 'quarantine',
    actor: 'ana',
    at: '2026-11-01T00:00:00Z',
    reason: 'flaky',
    source: 'manual',
  })

describe('the reporters check quarantines under the ids the store knows', () => {
  it('Jest: failures quarantined under jest-junit default names pass the run the flakewatch reporter records', async () => {
    const dir = testdir({}, 'ids-jest-')
    const db = join(dir, 'fw.db')
    const ids = await seeded(db, 'unit', 'jest-junit-default.xml', /expires the session|sums totals/)
    expect(ids).toEqual(['unit::Auth::Auth expires the session', 'unit::Cart::Cart sums totals'])
    // `jest --json` writes the AggregatedResult the reporter is given, with two fields renamed.
    const json = JSON.parse(readFileSync(join(FIXTURES, 'jest-results.json'), 'utf8')) as JestJson
    const results: JestAggregatedResult = {
      ...json,
      testResults: json.testResults.map(({ name, assertionResults, ...f }) => ({
        ...f,
        testFilePath: name,
        testResults: assertionResults,
      })),
    }
    expect(results.numFailedTests).toBe(2)
    const reporter = new FlakewatchJestReporter(
      { rootDir: '/tmp/ids-gen/jest' },
      { db, suite: 'unit', quarantine: true },
    )
    await reporter.onRunComplete(undefined, results)
    // Jest reads the count back for its exit code: both failures were forgiven.
    expect(results.numFailedTests).toBe(0)
    // And the run joined those tests' histories.
    const store = await openStore({ db, readOnly: true })
    try {
      for (const id of ids) expect((await store.getTestHistory(id))!.entries, id).toHaveLength(2)
      expect(await store.listTests()).toHaveLength(5)
    } finally {
      await store.close()
    }
  })

  it('Playwright: a quarantine from the CTRF report (project and file prefixes) forgives the JSON-named failure, from the store and from the file', async () => {
    const dir = testdir({}, 'ids-pw-')
    const db = join(dir, 'fw.db')
    const [coupon] = await seeded(db, 'e2e', 'playwright-ctrf.json', /coupon/)
    expect(coupon).toMatch(/^e2e::.*checkout\.spec\.ts::Checkout › applies a coupon$/)
    const job = await readJobResults([join(FIXTURES, 'playwright-results.json')], { suite: 'e2e' }, silent, {
      all: true,
    })
    expect(job.results.map((r) => r.test.testId)).not.toContain(coupon)
    const runs: RunBatch[] = [{ run: toRunMeta('pw-1', 'e2e', { env: { project: 'chromium' } }), results: job.results }]
    const file = join(dir, 'quarantine.json')
    writeFileSync(file, formatQuarantineFile({ records: [record(coupon!)], rules: [] }))
    for (const source of [{ file: null }, { file }]) {
      const loaded = await loadQuarantines(source, db, {}, runs)
      if ('error' in loaded) throw new Error(loaded.error)
      const decision = decideQuarantine({
        status: 'failed',
        incomplete: null,
        failOnFlaky: false,
        now: Date.now(),
        ...loaded,
        quarantines: loaded.records,
      })
      expect(decision.pass, JSON.stringify(source)).toBe(true)
      expect(decision.forgiven.map((f) => f.test_id)).toEqual([coupon])
      // The recording itself keeps the reporter's names.
      expect(runs[0]!.results.map((r) => r.test.testId)).not.toContain(coupon)
    }
  })
})
