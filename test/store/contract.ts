import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeTestId, type Result, type ResultStatus } from '../../src/model.js'
import { packRunBatch, TestSlots } from '../../src/store/packed-results.js'
import type { QuarantineRecord, RunBatch, Store, TestFilter } from '../../src/store/store.js'
import { batch, flakyResult, history, result, runMeta } from '../helpers/builders.js'
import { ingestFiles } from '../../src/pipeline/ingest-files.js'
import { join } from 'node:path'

async function collect(store: Store, filter?: Parameters<Store['scanHistory']>[0]) {
  const out = []
  for await (const h of store.scanHistory(filter)) out.push(h)
  return out.sort((a, b) => a.test.testId.localeCompare(b.test.testId))
}

const quarantine = (testId: string, extra: Partial<QuarantineRecord> = {}): QuarantineRecord => ({
  testId,
  reason: 'flaky: passes on retry',
  owner: 'team-a',
  issueUrl: 'https://example.test/issues/1',
  createdAt: '2026-01-01T00:00:00.000Z',
  createdBy: 'alice',
  expiresAt: '2026-01-31T00:00:00.000Z',
  source: 'manual',
  ...extra,
})

/**
 * The behaviour every Store must have. Each backend's test file calls this with a factory that opens a fresh,
 * empty store, so both backends are held to the same contract.
 */
export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} store contract`, () => {
    let store: Store
    beforeEach(async () => {
      store = await open()
    })
    afterEach(async () => {
      await store.close()
    })

    it('stores a report and reads it back as history, oldest first', async () => {
      for (const b of history()
        .run('r1')
        .pass('a')
        .fail('b')
        .run('r2')
        .fail('a')
        .pass('b')
        .run('r3')
        .flaky('a')
        .build()) {
        const [outcome] = await store.ingestReport(b)
        expect(outcome!.outcome).toBe('ingested')
      }
      const hist = await collect(store)
      expect(hist.map((h) => h.test.testId)).toEqual(['unit::mod::a', 'unit::mod::b'])
      const a = hist[0]!
      expect(a.entries.map((e) => [e.run.runId, e.status])).toEqual([
        ['r1', 'passed'],
        ['r2', 'failed'],
        ['r3', 'passed'],
      ])
      expect(a.entries[2]!.flakyOnRetry).toBe(true)
      expect(a.entries[2]!.attempts).toBe(2)
      expect(a.entries[2]!.failedAttempts).toBe(1)
      expect(a.entries[1]!.message).toBe('expected 1 to be 2 in a')
      expect(a.entries[0]!.run.branch).toBe('main')
      const stats = await store.stats()
      expect(stats).toMatchObject({ runs: 3, tests: 2, results: 5 })
    })

    it('recognises the same report for the same run as a duplicate, and --replace overwrites it', async () => {
      const b = batch(runMeta('r1', '2026-01-01T00:00:00Z'), [result('a', 'passed'), result('b', 'failed')], 'hash-1')
      expect((await store.ingestReport(b))[0]).toMatchObject({ outcome: 'ingested', results: 2, tests: 2 })
      expect((await store.ingestReport(b))[0]).toMatchObject({ outcome: 'duplicate', results: 0 })
      expect((await store.stats()).results).toBe(2)
      const changed = batch(
        runMeta('r1', '2026-01-01T00:00:00Z'),
        [result('a', 'failed'), result('b', 'failed')],
        'hash-1',
      )
      expect((await store.ingestReport(changed, { replace: true }))[0]).toMatchObject({
        outcome: 'replaced',
        results: 2,
      })
      const hist = await collect(store)
      expect(hist[0]!.entries.map((e) => e.status)).toEqual(['failed'])
      expect((await store.stats()).results).toBe(2)
    })

    it('merges several report files of one run without double-counting', async () => {
      const run = runMeta('job-7', '2026-01-02T00:00:00Z', { branch: null })
      await store.ingestReport(batch(run, [result('a', 'passed')], 'file-1'))
      await store.ingestReport(
        batch({ ...run, branch: 'feature' }, [result('b', 'passed'), result('a', 'failed')], 'file-2'),
      )
      expect((await store.stats()).results).toBe(2)
      expect((await store.getRun('job-7'))!.branch).toBe('feature')
      expect((await store.listRuns()).length).toBe(1)
    })

    it('keeps run summaries right through merges and replaces', async () => {
      const run = runMeta('job-7', '2026-01-02T00:00:00Z')
      await store.ingestReport(batch(run, [result('a', 'passed'), flakyResult('f')], 'file-1'))
      const second = [result('b', 'failed'), result('a', 'failed'), result('s', 'skipped')]
      await store.ingestReport(batch(run, second, 'file-2'))
      const summary = async () =>
        (await store.runSummaries()).map((s) => [s.total, s.passed, s.failed, s.skipped, s.flaky])
      expect(await summary()).toEqual([[4, 2, 1, 1, 1]])
      await store.ingestReport(batch(run, [result('a', 'failed'), result('f', 'failed')], 'file-3'), { replace: true })
      expect(await summary()).toEqual([[4, 0, 3, 1, 0]])
    })

    it('keeps every field of a run', async () => {
      const run = runMeta('r9', '2026-02-01T10:00:00.000Z', {
        revision: 'abc123',
        pipelineId: '4242',
        pipelineUrl: 'https://ci.example/p/4242',
        jobId: '99',
        jobUrl: 'https://ci.example/j/99',
        artifactsUrl: 'https://ci.example/j/99/artifacts',
        jobStatus: 'success',
        pipelineStatus: 'failed',
        runnerId: 'ci-7',
        env: { browser: 'chromium', os: 'linux' },
        finishedAt: '2026-02-01T10:05:00.000Z',
        durationMs: 300000,
        status: 'interrupted',
      })
      await store.ingestReport(batch(run, [result('a', 'passed')]))
      const got = await store.getRun('r9')
      expect(got).toMatchObject({ ...run })
      expect(typeof got!.uploadedAt).toBe('string')
      const [info] = (await collect(store))[0]!.entries
      expect(info!.run).toMatchObject({
        runId: 'r9',
        revision: 'abc123',
        runnerId: 'ci-7',
        env: { browser: 'chromium' },
        status: 'interrupted',
      })
    })

    it('stores attempts as rows and returns them in retry order', async () => {
      await store.ingestReport(batch(runMeta('r1', '2026-01-01T00:00:00Z'), [flakyResult('a'), result('b', 'passed')]))
      const attempts = await store.getAttempts('unit::mod::a', 'r1')
      expect(attempts.map((a) => [a.retry, a.status])).toEqual([
        [0, 'failed'],
        [1, 'passed'],
      ])
      expect(attempts[0]!.stack).toBe('at x.ts:1')
      expect(await store.getAttempts('unit::mod::b', 'r1')).toEqual([
        { retry: 0, status: 'passed', durationMs: 10, message: null, stack: null },
      ])
    })

    it('filters the scan by suite, branch, time, tests and last runs', async () => {
      for (const b of history()
        .run('r1')
        .pass('a')
        .pass('b')
        .run('r2', { branch: 'dev' })
        .fail('a')
        .run('r3')
        .fail('a')
        .pass('b')
        .build())
        await store.ingestReport(b)
      expect((await collect(store, { branch: 'main' }))[0]!.entries.map((e) => e.run.runId)).toEqual(['r1', 'r3'])
      expect((await collect(store, { lastRuns: 1 })).map((h) => h.entries.length)).toEqual([1, 1])
      expect((await collect(store, { testIds: ['unit::mod::b'] })).map((h) => h.test.name)).toEqual(['b'])
      // Named tests, with the other filters, each with its whole history in time order.
      const named = await collect(store, { testIds: ['unit::mod::a', 'nope'], branch: 'main' })
      expect(named.map((h) => [h.test.name, h.entries.map((e) => `${e.run.runId}:${e.status}`)])).toEqual([
        ['a', ['r1:passed', 'r3:failed']],
      ])
      expect(
        (await collect(store, { testIds: ['unit::mod::a'], since: Date.UTC(2026, 0, 2) }))[0]!.entries,
      ).toHaveLength(2)
      expect((await store.testsInRuns(['r2'])).sort()).toEqual(['unit::mod::a'])
      expect((await store.testsInRuns(['r1', 'r3', 'r1'])).sort()).toEqual(['unit::mod::a', 'unit::mod::b'])
      expect(await store.testsInRuns(['nope'])).toEqual([])
      const since = Date.UTC(2026, 0, 2)
      expect((await collect(store, { since }))[0]!.entries.map((e) => e.run.runId)).toEqual(['r2', 'r3'])
      expect(await collect(store, { suite: 'other' })).toEqual([])
    })

    it('reads the heatmap cells of some tests in some runs, and nothing else', async () => {
      for (const b of history()
        .run('r1')
        .pass('a')
        .fail('b')
        .run('r2')
        .flaky('a')
        .run('r3')
        .pass('a')
        .pass('b')
        .build())
        await store.ingestReport(b)
      const cells = await store.heatCells(['unit::mod::a', 'unit::mod::b', 'unit::mod::nope'], ['r1', 'r2', 'gone'])
      expect(cells.map((c) => [c.testId, c.runId, c.status, c.flakyOnRetry]).sort()).toEqual([
        ['unit::mod::a', 'r1', 'passed', false],
        ['unit::mod::a', 'r2', 'passed', true],
        ['unit::mod::b', 'r1', 'failed', false],
      ])
      expect(await store.heatCells([], ['r1'])).toEqual([])
      expect(await store.heatCells(['unit::mod::a'], ['gone'])).toEqual([])
    })

    it('returns one test’s newest history and lists tests and runs', async () => {
      for (const b of history().run('r1').pass('a').run('r2').fail('a').run('r3').pass('a').pass('zeta').build())
        await store.ingestReport(b)
      const h = await store.getTestHistory('unit::mod::a', { limit: 2 })
      expect(h!.entries.map((e) => e.run.runId)).toEqual(['r2', 'r3'])
      expect(await store.getTestHistory('nope')).toBeNull()
      expect((await store.listTests({ search: 'ZET' })).map((t) => t.name)).toEqual(['zeta'])
      expect((await store.listRuns({ limit: 2 })).map((r) => r.runId)).toEqual(['r3', 'r2'])
      const sums = await store.runSummaries()
      expect(sums.map((s) => [s.runId, s.total, s.passed, s.failed])).toEqual([
        ['r3', 2, 2, 0],
        ['r2', 1, 0, 1],
        ['r1', 1, 1, 0],
      ])
      expect(await store.getTest('unit::mod::zeta')).toMatchObject({ name: 'zeta', suite: 'unit', module: 'mod' })
    })

    it('lists the tests of some modules of a suite', async () => {
      const inModule = (name: string, module: string, suite = 'unit') => {
        const r = result(name, 'passed', {}, suite)
        return { ...r, test: { ...r.test, testId: makeTestId(suite, module, name), module } }
      }
      await store.ingestReport(
        batch(runMeta('r1', '2026-01-01T00:00:00Z'), [
          inModule('a', 'src/a.test.ts'),
          inModule('b', 'src/a.test.ts'),
          inModule('c', 'src/c.test.ts'),
          // A module whose name holds the separator, and the same module in another suite.
          inModule('d', 'src/a.test.ts::inner'),
          inModule('e', 'src/a.test.ts', 'e2e'),
        ]),
      )
      const names = async (filter: TestFilter) => (await store.listTests(filter)).map((t) => t.name)
      expect(await names({ suite: 'unit', modules: ['src/a.test.ts'] })).toEqual(['a', 'b'])
      expect(await names({ suite: 'unit', modules: ['src/c.test.ts', 'src/a.test.ts::inner'] })).toEqual(['d', 'c'])
      expect(await names({ modules: ['src/a.test.ts'] })).toEqual(['e', 'a', 'b'])
      expect(await names({ suite: 'unit', modules: [] })).toEqual([])
      expect(await names({ suite: 'unit', modules: ["x') OR 1=1 --"] })).toEqual([])
    })

    it('treats hostile test names as data', async () => {
      const evil = `x'); DROP TABLE results; --<script>alert(1)</script>`
      await store.ingestReport(batch(runMeta('r1', '2026-01-01T00:00:00Z'), [result(evil, 'failed')]))
      const tests = await store.listTests({ search: "'); drop" })
      expect(tests[0]!.name).toBe(evil)
      expect((await store.stats()).results).toBe(1)
      expect(await store.listTests({ search: '%' })).toEqual([])
    })

    it('keeps text with tabs, newlines, backslashes and non-ASCII intact', async () => {
      // Bulk paths (PostgreSQL COPY) have their own escaping; a literal \\N must not come back as null.
      const odd = 'tab\there\nnew line\r\n \\N back\\slash ünïcödé 🙂'
      const r = {
        ...result(`name ${odd}`, 'failed'),
        errorType: `Err ${odd}`,
        message: `msg ${odd}`,
        healingOccurred: true,
      }
      const f = flakyResult('f')
      f.attempts[0]!.stack = `at ${odd}`
      await store.ingestReport(batch(runMeta('r1', '2026-01-01T00:00:00Z'), [r, f]))
      const hist = await collect(store)
      const got = hist.find((h) => h.test.name === `name ${odd}`)!
      expect(got.test.testId).toBe(`unit::mod::name ${odd}`)
      expect(got.entries[0]).toMatchObject({
        errorType: `Err ${odd}`,
        message: `msg ${odd}`,
        status: 'failed',
        healingOccurred: true,
      })
      const flaky = hist.find((h) => h.test.name === 'f')!.entries[0]
      expect(flaky).toMatchObject({ flakyOnRetry: true, healingOccurred: false })
      expect((await store.getAttempts('unit::mod::f', 'r1'))[0]!.stack).toBe(`at ${odd}`)
      const empty = { ...result('e', 'failed'), errorType: '', message: '' }
      await store.ingestReport(batch(runMeta('r2', '2026-01-02T00:00:00Z'), [empty]))
      expect((await store.getTestHistory('unit::mod::e'))!.entries[0]).toMatchObject({ errorType: '', message: null })
    })

    it('folds a test named twice in one report into one result with every attempt', async () => {
      const [o] = await store.ingestReport(
        batch(runMeta('r1', '2026-01-01T00:00:00Z'), [result('a', 'failed'), result('a', 'passed'), flakyResult('b')]),
      )
      expect(o).toMatchObject({ outcome: 'ingested', tests: 2, results: 2, attempts: 4 })
      const a = (await collect(store)).find((h) => h.test.name === 'a')!
      expect(a.entries.map((e) => [e.status, e.flakyOnRetry, e.attempts])).toEqual([['passed', true, 2]])
      expect((await store.getAttempts('unit::mod::a', 'r1')).map((x) => x.status)).toEqual(['failed', 'passed'])
    })

    it('folds repeats that arrive in later chunks of a streamed report, and keeps it all-or-nothing', async () => {
      const run = runMeta('r1', '2026-01-01T00:00:00Z')
      const chunks = [[result('a', 'failed'), result('b', 'passed')], [result('c', 'passed')], [result('a', 'passed')]]
      async function* gen() {
        for (const results of chunks) yield await Promise.resolve([{ run, results }])
      }
      const [o] = await store.ingestStream({ file: 'f', contentHash: 'h', chunks: gen(), runs: () => [run] })
      expect(o).toMatchObject({ outcome: 'ingested', tests: 3, results: 3, attempts: 4 })
      const a = (await collect(store)).find((h) => h.test.name === 'a')!
      expect(a.entries[0]).toMatchObject({ status: 'passed', flakyOnRetry: true, attempts: 2, failedAttempts: 1 })
      expect((await store.getRun('r1'))!).toBeTruthy()
      expect((await store.runSummaries())[0]).toMatchObject({ total: 3, passed: 3, failed: 0, flaky: 1 })

      // A stream that fails after its first chunk leaves nothing behind.
      const other = runMeta('r2', '2026-01-02T00:00:00Z')
      async function* broken() {
        yield await Promise.resolve([{ run: other, results: [result('x', 'passed')] }])
        throw new Error('report truncated')
      }
      await expect(
        store.ingestStream({ file: 'g', contentHash: 'h2', chunks: broken(), runs: () => [other] }),
      ).rejects.toThrow('report truncated')
      expect(await store.getRun('r2')).toBeNull()
      expect(await store.getTest('unit::mod::x')).toBeNull()
      expect((await store.stats()).results).toBe(3)
    })

    it('keeps each result’s execution position through folds and merges, and nothing that is not one', async () => {
      const run = runMeta('r1', '2026-01-01T00:00:00Z')
      const at = (name: string, position: number | null | undefined, status: 'passed' | 'failed' = 'passed') =>
        result(name, status, { position })
      // a repeats within its chunk and again in a later one: it keeps the place where it first ran.
      const chunks = [
        [at('a', 2, 'failed'), at('b', 0), at('a', 5, 'failed')],
        [at('c', 1), at('a', 7), at('bad-negative', -1), at('bad-fraction', 1.5), at('bad-huge', 1e300)],
        [at('unknown', undefined)],
      ]
      async function* gen() {
        for (const results of chunks) yield await Promise.resolve([{ run, results }])
      }
      await store.ingestStream({ file: 'f', contentHash: 'h', chunks: gen(), runs: () => [run] })
      // A second report of the same run (another shard) is merged into it with its own positions.
      await store.ingestReport(batch(run, [at('d', 3)], 'h-second'))
      const positions = Object.fromEntries(
        (await collect(store)).map((h) => [h.test.name, h.entries.map((e) => e.position)]),
      )
      expect(positions).toEqual({
        a: [2],
        b: [0],
        c: [1],
        d: [3],
        'bad-negative': [null],
        'bad-fraction': [null],
        'bad-huge': [null],
        unknown: [null],
      })
      const a = (await collect(store)).find((h) => h.test.name === 'a')!
      expect(a.entries[0]).toMatchObject({ status: 'passed', attempts: 3, failedAttempts: 2 })
      expect((await store.getTestHistory('unit::mod::c'))!.entries[0]!.position).toBe(1)
    })

    it('moves a new run and its results when the stream learns the start only after its first chunk', async () => {
      const unknown = { ...runMeta('late', '2026-01-01T00:00:00Z'), startedAt: null }
      const known = runMeta('late', '2026-02-03T04:05:06Z')
      async function* gen() {
        // The first chunk is written before anything says when the run started (no timestamp yet).
        yield await Promise.resolve([{ run: unknown, results: [result('a', 'passed')] }])
        yield await Promise.resolve([{ run: unknown, results: [result('b', 'failed')] }])
      }
      const [o] = await store.ingestStream({ file: 'f', contentHash: 'h', chunks: gen(), runs: () => [known] })
      expect(o).toMatchObject({ outcome: 'ingested', results: 2 })
      expect(Date.parse((await store.getRun('late'))!.startedAt!)).toBe(Date.parse('2026-02-03T04:05:06Z'))
      const h = await collect(store)
      expect(h.map((t) => t.entries.map((e) => e.run.at))).toEqual([
        [Date.parse('2026-02-03T04:05:06Z')],
        [Date.parse('2026-02-03T04:05:06Z')],
      ])
    })

    it('stores a report whose run never says when it started (the ingest time stands)', async () => {
      const run = { ...runMeta('undated', '2026-01-01T00:00:00Z'), startedAt: null }
      async function* gen() {
        yield await Promise.resolve([{ run, results: [result('a', 'passed')] }])
        // Time passes between chunks, as it does on a large report.
        await new Promise((r) => setTimeout(r, 20))
        yield [{ run, results: [result('b', 'passed')] }]
      }
      const [o] = await store.ingestStream({ file: 'f', contentHash: 'h', chunks: gen(), runs: () => [run] })
      expect(o).toMatchObject({ outcome: 'ingested', results: 2 })
      const [a, b] = (await collect(store)).map((t) => t.entries[0]!.run.at)
      expect(a).toBe(b)
    })

    it('keeps quarantines with an append-only audit trail', async () => {
      await store.putQuarantine(quarantine('unit::mod::a'), {
        action: 'quarantine',
        actor: 'alice',
        at: '2026-01-01T00:00:00.000Z',
        reason: 'flaky',
        source: 'manual',
      })
      expect(await store.getQuarantine('unit::mod::a')).toEqual(quarantine('unit::mod::a'))
      expect(await store.listQuarantines()).toHaveLength(1)
      expect(
        await store.deleteQuarantine('unit::mod::a', {
          action: 'release',
          actor: 'bob',
          at: '2026-01-02T00:00:00.000Z',
          reason: 'fixed',
          source: 'manual',
        }),
      ).toBe(true)
      expect(
        await store.deleteQuarantine('unit::mod::a', {
          action: 'release',
          actor: 'bob',
          at: '2026-01-02T00:00:00.000Z',
          reason: 'again',
          source: 'manual',
        }),
      ).toBe(false)
      expect(await store.getQuarantine('unit::mod::a')).toBeNull()
      const audit = await store.listAudit({ testId: 'unit::mod::a' })
      expect(audit.map((a) => [a.action, a.actor, a.reason])).toEqual([
        ['release', 'bob', 'fixed'],
        ['quarantine', 'alice', 'flaky'],
      ])
      expect(audit[1]!.record).toEqual(quarantine('unit::mod::a'))
    })

    it('keeps quarantine rules with their own audit trail, and keeps them through a prune', async () => {
      const rule = {
        id: 'timeouts-arm64',
        match: { message: 'Timeout \\d+ms exceeded', env: { runner: 'arm64' } },
        reason: 'arm64 runners are slow',
        owner: 'team-infra',
        issueUrl: 'https://example.test/issues/7',
        createdAt: '2026-01-01T00:00:00.000Z',
        createdBy: 'alice',
        expiresAt: '2026-01-30T00:00:00.000Z',
      }
      const audit = { action: 'quarantine' as const, actor: 'alice', at: '2026-01-01T00:00:00.000Z', reason: 'slow' }
      await store.putQuarantineRule(rule, audit)
      await store.putQuarantineRule({ ...rule, id: 'a-first', match: { file: 'e2e/**' } }, audit)
      await store.putQuarantineRule({ ...rule, owner: 'team-arm' }, { ...audit, action: 'update', actor: 'bob' })
      const rules = await store.listQuarantineRules()
      expect(rules.map((r) => r.id)).toEqual(['a-first', 'timeouts-arm64'])
      expect(rules[1]).toEqual({ ...rule, owner: 'team-arm' })
      expect(rules[0]!.match).toEqual({ file: 'e2e/**' })
      await store.prune(Date.parse('2100-01-01'))
      expect(await store.listQuarantineRules()).toHaveLength(2)
      const removal = { ...audit, action: 'release' as const, actor: 'carol', reason: 'fixed' }
      expect(await store.deleteQuarantineRule('timeouts-arm64', removal)).toBe(true)
      expect(await store.deleteQuarantineRule('timeouts-arm64', removal)).toBe(false)
      const trail = await store.listRuleAudit({ ruleId: 'timeouts-arm64' })
      expect(trail.map((a) => [a.action, a.actor])).toEqual([
        ['release', 'carol'],
        ['update', 'bob'],
        ['quarantine', 'alice'],
      ])
      expect(trail[0]!.rule).toBeNull()
      expect(trail[2]!.rule).toEqual(rule)
      expect(await store.listRuleAudit({ limit: 1 })).toHaveLength(1)
      // The quarantine audit of single tests is a separate trail.
      expect(await store.listAudit()).toEqual([])
    })

    it('keeps fingerprints and an append-only heal log', async () => {
      await store.putFingerprint({
        testId: 't',
        locator: '#go',
        data: { tag: 'button' },
        updatedAt: '2026-01-01T00:00:00Z',
      })
      await store.putFingerprint({ testId: 't', locator: '#go', data: { tag: 'a' }, updatedAt: '2026-01-02T00:00:00Z' })
      expect((await store.getFingerprint('t', '#go'))!.data).toEqual({ tag: 'a' })
      expect(await store.getFingerprint('t', '#other')).toBeNull()
      const heal = {
        testId: 't',
        oldLocator: '#go',
        newLocator: '[data-testid="go"]',
        score: 0.8,
        breakdown: { text: 1 },
        url: 'http://x',
        at: '2026-01-03T00:00:00Z',
        runId: null,
      }
      await store.appendHeal(heal)
      await store.appendHeal({ ...heal, at: '2026-01-04T00:00:00Z' })
      const heals = await store.listHeals({ testId: 't' })
      expect(heals.map((h) => h.at)).toEqual(['2026-01-04T00:00:00Z', '2026-01-03T00:00:00Z'])
      expect(heals[0]!.breakdown).toEqual({ text: 1 })
    })

    it('lists the runs written since a time, latest write first: new, merged into, replaced, not duplicates', async () => {
      const ids = async (since = 0, limit = 10) => (await store.runsWrittenSince(since, limit)).map((w) => w.runId)
      const r1 = runMeta('r1', '2026-01-02T00:00:00Z')
      await store.ingestReport(batch(r1, [result('a', 'passed')], 'h1'))
      // Written after r1 though it ran before: the order is the writes', not the runs'.
      await store.ingestReport(batch(runMeta('r2', '2026-01-01T00:00:00Z'), [result('a', 'failed')], 'h2'))
      await store.ingestReport(batch(runMeta('r3', '2026-01-03T00:00:00Z'), [result('a', 'passed')], 'h3'))
      expect(await ids()).toEqual(['r3', 'r2', 'r1'])
      const first = await store.runsWrittenSince(0, 10)
      // A number on both backends (PostgreSQL hands a bigint over as a string unless told otherwise).
      for (const w of first) expect(typeof w.writtenAt).toBe('number')
      // Strictly increasing, even within one millisecond: a later write always looks newer.
      expect(first[0]!.writtenAt).toBeGreaterThan(first[1]!.writtenAt)
      expect(first[1]!.writtenAt).toBeGreaterThan(first[2]!.writtenAt)
      expect(await ids(first[1]!.writtenAt)).toEqual(['r3', 'r2'])
      expect(await ids(first[0]!.writtenAt + 1)).toEqual([])
      expect(await ids(0, 2)).toEqual(['r3', 'r2'])

      // A second report of r1 merges into it: r1 was written again.
      await store.ingestReport(batch(r1, [result('b', 'failed')], 'h1-second'))
      expect(await ids()).toEqual(['r1', 'r3', 'r2'])
      const merged = (await store.runsWrittenSince(0, 1))[0]!
      expect(merged.writtenAt).toBeGreaterThan(first[0]!.writtenAt)
      // The same report again is a duplicate: nothing was written.
      expect((await store.ingestReport(batch(r1, [result('b', 'failed')], 'h1-second')))[0]!.outcome).toBe('duplicate')
      expect(await store.runsWrittenSince(0, 1)).toEqual([merged])
      // --replace rewrites r2.
      const replaced = await store.ingestReport(
        batch(runMeta('r2', '2026-01-01T00:00:00Z'), [result('a', 'passed')], 'h2'),
        {
          replace: true,
        },
      )
      expect(replaced[0]!.outcome).toBe('replaced')
      expect(await ids()).toEqual(['r2', 'r1', 'r3'])
      expect(await ids(merged.writtenAt + 1)).toEqual(['r2'])
      // A pruned run is gone from the list (a reader finds it missing from its run set instead).
      await store.prune(Date.parse('2026-01-01T12:00:00Z'))
      expect(await ids()).toEqual(['r1', 'r3'])
    })

    it('prunes old runs in batches and keeps quarantines and audit', async () => {
      for (const b of history().run('r1').pass('a').run('r2').fail('a').run('r3').pass('a').build())
        await store.ingestReport(b)
      await store.putQuarantine(quarantine('unit::mod::a'), {
        action: 'quarantine',
        actor: 'x',
        at: '2026-01-01T00:00:00Z',
        reason: 'r',
        source: 'manual',
      })
      const pruned = await store.prune(Date.UTC(2026, 0, 3), { batchSize: 1 })
      expect(pruned).toEqual({ runs: 2, results: 2 })
      expect((await store.listRuns()).map((r) => r.runId)).toEqual(['r3'])
      expect(await store.getQuarantine('unit::mod::a')).not.toBeNull()
      expect(await store.listAudit()).toHaveLength(1)
      expect(await store.getAttempts('unit::mod::a', 'r2')).toEqual([])
    })

    it('stores packed batches (from the parse worker) exactly as it stores the same results as objects', async () => {
      const r1 = runMeta('r1', '2026-01-01T00:00:00Z')
      const r2 = runMeta('r2', '2026-01-02T00:00:00Z')
      // Failed without a message or error type: plain, yet kept as an attempt row.
      const bare = (name: string, status: ResultStatus, extra: Partial<Result> = {}) =>
        result(name, status, { errorType: null, message: null, ...extra })
      const first = [
        // Repeats: plain then whole (later chunk), whole then plain, plain twice in one chunk.
        [{ run: r1, results: [bare('a', 'passed'), result('b', 'failed'), bare('c', 'failed'), bare('d', 'skipped')] }],
        [{ run: r1, results: [bare('d', 'passed', { position: 4 }), result('b', 'passed'), flakyResult('a')] }],
        [{ run: r1, results: [bare('e', 'passed', { durationMs: null, healingOccurred: true }), bare('c', 'error')] }],
      ]
      const reports: { hash: string; chunks: RunBatch[][]; replace?: boolean; objects?: boolean; fails?: boolean }[] = [
        { hash: 'h1', chunks: first },
        // Another shard of r1, merged: a is r1's already (skipped), f is new and repeats.
        {
          hash: 'h2',
          chunks: [[{ run: r1, results: [bare('f', 'passed'), bare('a', 'failed'), bare('f', 'failed')] }]],
        },
        { hash: 'h1', chunks: first },
        { hash: 'h1', replace: true, chunks: [[{ run: r1, results: [bare('a', 'failed'), bare('c', 'passed')] }]] },
        // Tests x and y are created, then rolled back; z takes the next key; x and y come back under their slots.
        { hash: 'h3', fails: true, chunks: [[{ run: r2, results: [bare('x', 'passed'), bare('y', 'passed')] }]] },
        { hash: 'h4', objects: true, chunks: [[{ run: r2, results: [bare('z', 'passed')] }]] },
        { hash: 'h5', chunks: [[{ run: r2, results: [bare('y', 'failed'), bare('x', 'passed')] }]] },
      ]
      async function ingestAll(target: Store, slots: TestSlots | null) {
        const outcomes: unknown[] = []
        for (const { hash, chunks, replace, objects, fails } of reports) {
          async function* gen() {
            for (const c of chunks) {
              yield await Promise.resolve(slots && !objects ? c.map((b) => packRunBatch(b, slots)) : c)
            }
            if (fails) throw new Error('report truncated')
          }
          const runs = () => [chunks[0]![0]!.run]
          outcomes.push(
            await target
              .ingestStream({ file: 'f', contentHash: hash, chunks: gen(), runs }, { replace })
              .catch((error: Error) => error.message.replace(/^.*: /, '')),
          )
        }
        const tests = 'abcdefxyz'.split('')
        const attempts = []
        for (const run of ['r1', 'r2'])
          for (const t of tests) attempts.push(await target.getAttempts(`unit::mod::${t}`, run))
        const stats = await target.stats()
        return { outcomes, history: await collect(target), runs: await target.runSummaries(), attempts, stats }
      }
      const objects = await open()
      try {
        const packed = await ingestAll(store, new TestSlots())
        expect(packed).toEqual(await ingestAll(objects, null))
        expect(packed.outcomes.slice(0, 3)).toMatchObject([
          [{ outcome: 'ingested', tests: 5, results: 5 }],
          [{ outcome: 'ingested', tests: 2, results: 1 }],
          [{ outcome: 'duplicate' }],
        ])
        const x = packed.history.find((h) => h.test.name === 'x')!
        expect(x.entries.map((e) => [e.run.runId, e.status])).toEqual([['r2', 'passed']])
      } finally {
        await objects.close()
      }
    })

    it('rolls back a whole report when any part fails', async () => {
      const good = result('a', 'passed')
      const bad = { ...result('b', 'passed'), status: 'bogus' as never }
      await expect(store.ingestReport(batch(runMeta('r1', '2026-01-01T00:00:00Z'), [good, bad]))).rejects.toThrow()
      expect(await store.stats()).toMatchObject({ runs: 0, tests: 0, results: 0 })
      // The test key cache must not keep keys from the rolled-back transaction.
      await store.ingestReport(batch(runMeta('r2', '2026-01-02T00:00:00Z'), [good]))
      expect((await collect(store))[0]!.entries).toHaveLength(1)
    })

    it('keeps the names tests were seen under: the first ingest decision stands, a person’s replaces it', async () => {
      const at = '2026-01-01T00:00:00.000Z'
      const name = (nameId: string, testId: string, source: 'ingest' | 'merge' | 'split' = 'ingest') => ({
        nameId,
        suite: nameId.split('::')[0]!,
        testId,
        moduleIsLabel: nameId.includes('Auth::'),
        source,
        at,
      })
      await store
        .testNames()
        .recordNames([name('unit::Auth::Auth a', 'unit::src/a.js::Auth › a'), name('e2e::x::y', 'e2e::z::y')])
      await store.testNames().recordNames([name('unit::Auth::Auth a', 'unit::other::a')])
      expect(await store.testNames().listNames({ suite: 'unit' })).toEqual([
        name('unit::Auth::Auth a', 'unit::src/a.js::Auth › a'),
      ])
      await store.testNames().recordNames([name('unit::Auth::Auth a', 'unit::Auth::Auth a', 'split')])
      expect(await store.testNames().listNames({ testId: 'unit::Auth::Auth a' })).toEqual([
        name('unit::Auth::Auth a', 'unit::Auth::Auth a', 'split'),
      ])
      expect(await store.testNames().listNames({ testId: 'unit::src/a.js::Auth › a' })).toEqual([])
    })

    it('merges one test into another with its history, audited, and refuses tests that ran side by side', async () => {
      const audit = { actor: 'ana', reason: 'jest-junit renamed it', at: '2026-02-01T00:00:00.000Z' }
      const old = result('a', 'failed', {
        attempts: [{ retry: 0, status: 'failed', durationMs: 1, message: 'x', stack: null }],
      })
      await store.ingestReport(batch(runMeta('r1', '2026-01-01T00:00:00Z'), [old, result('c', 'passed')]))
      await store.ingestReport(batch(runMeta('r2', '2026-01-02T00:00:00Z'), [result('b', 'passed')]))
      const [a, b, c] = ['a', 'b', 'c'].map((n) => makeTestId('unit', 'mod', n)) as [string, string, string]
      expect(await store.testNames().mergeTests(a, b, audit)).toEqual({
        results: 1,
        quarantine: null,
        ticket: null,
        fingerprints: 0,
      })
      expect(await store.getTest(a)).toBeNull()
      const merged = await store.getTestHistory(b)
      expect(merged!.entries.map((e) => [e.run.runId, e.status])).toEqual([
        ['r1', 'failed'],
        ['r2', 'passed'],
      ])
      expect((await store.getAttempts(b, 'r1')).map((x) => x.message)).toEqual(['x'])
      expect(await store.testNames().listNames({ testId: b })).toMatchObject([{ nameId: a, source: 'merge' }])
      expect(await store.listAuditLog({ kind: 'test' })).toMatchObject([
        { subject: a, action: 'merge', actor: 'ana', reason: 'jest-junit renamed it', data: { into: b, results: 1 } },
        // (its data also says what was carried: nothing here)
      ])
      // c and b both ran in r1 now: two tests.
      await expect(store.testNames().mergeTests(c, b, audit)).rejects.toThrow(/both have a result in run "r1"/)
      await expect(store.testNames().mergeTests(b, b, audit)).rejects.toThrow(/itself/)
      await expect(store.testNames().mergeTests('unit::mod::nope', b, audit)).rejects.toThrow(/no test/)
      expect(await store.getTest(c)).not.toBeNull()
      // Split: the name is kept apart again, audited; a name never matched is not split.
      expect(await store.testNames().splitName(a, audit)).toBe(true)
      expect(await store.testNames().splitName(a, audit)).toBe(false)
      expect(await store.testNames().listNames({ nameId: a })).toMatchObject([{ testId: a, source: 'split' }])
      expect((await store.listAuditLog({ kind: 'test' })).map((e) => e.action)).toEqual(['split', 'merge'])
    })

    it('keeps a run’s package timings from go test -json, once, through duplicates, merges and replaces', async () => {
      const go = (f: string) => join(import.meta.dirname, '../fixtures/reports/go-json', f)
      const ingest = async (f: string, replace = false) => {
        const summary = await ingestFiles({ store, inputs: [go(f)], context: { suite: 'go', runId: 'go-1' }, replace })
        expect(summary.failed).toEqual([])
        return summary
      }
      await ingest('go-packages.json')
      const three = [
        { name: 'example.com/shop/price', durationMs: 36, status: 'failed' },
        { name: 'example.com/shop/cart', durationMs: 5, status: 'passed' },
        { name: 'example.com/shop/docs', durationMs: 0, status: 'skipped' },
      ]
      expect(await store.getRunTimings('go-1')).toEqual(three)
      expect((await ingest('go-packages.json')).duplicates).toHaveLength(1)
      expect(await store.getRunTimings('go-1')).toEqual(three)
      await ingest('go-packages.json', true)
      expect(await store.getRunTimings('go-1')).toEqual(three)
      // Another report of the same run adds its package.
      await ingest('go-test.json')
      expect((await store.getRunTimings('go-1')).map((t) => [t.name, t.durationMs])).toEqual([
        ['example.com/calc/calc', 134],
        ['example.com/shop/price', 36],
        ['example.com/shop/cart', 5],
        ['example.com/shop/docs', 0],
      ])
      expect(await store.getRunTimings('nope')).toEqual([])
      await store.prune(Date.now() + 86_400_000)
      expect(await store.getRun('go-1')).toBeNull()
      expect(await store.getRunTimings('go-1')).toEqual([])
    })

    it('a merge carries the quarantine (audited), the ticket and the heal fingerprints to the test merged into', async () => {
      const audit = { actor: 'ana', reason: 'one test', at: '2026-02-01T00:00:00.000Z' }
      const id = (n: string) => makeTestId('unit', 'mod', n)
      for (const [run, n] of [
        ['r1', 'a'],
        ['r2', 'b'],
        ['r3', 'c'],
        ['r4', 'd'],
      ] as const) {
        await store.ingestReport(batch(runMeta(run, `2026-01-0${run[1]}T00:00:00Z`), [result(n, 'failed')]))
      }
      const q = (testId: string, reason: string): QuarantineRecord => ({
        testId,
        reason,
        owner: 'team-auth',
        issueUrl: null,
        createdAt: '2026-01-05T00:00:00.000Z',
        createdBy: 'bob',
        expiresAt: null,
        source: 'manual',
      })
      const qAudit = {
        action: 'quarantine' as const,
        actor: 'bob',
        at: '2026-01-05T00:00:00.000Z',
        reason: 'flaky',
        source: 'manual' as const,
      }
      await store.putQuarantine(q(id('a'), 'flaky under jest-junit'), qAudit)
      const want = (testId: string) => ({
        testId,
        tracker: 'github',
        marker: `fw-${testId}`,
        wanted: { state: 'open' as const, reason: 'became flaky' },
        at: '2026-01-05T00:00:00.000Z',
        now: 1000,
      })
      const state = (testId: string) => ({
        testId,
        verdict: 'flaky' as const,
        quarantined: true,
        expiryWarnedFor: null,
        updatedAt: '2026-01-05T00:00:00.000Z',
      })
      await store.tickets().recordChanges([state(id('a'))], [want(id('a'))])
      const fp = (testId: string, locator: string, data: unknown, updatedAt: string) => ({
        testId,
        locator,
        data,
        updatedAt,
      })
      await store.putFingerprint(fp(id('a'), '#login', { tag: 'button', v: 'a' }, '2026-01-03T00:00:00.000Z'))
      await store.putFingerprint(fp(id('a'), '#new', { tag: 'a', v: 'a' }, '2026-01-03T00:00:00.000Z'))
      await store.putFingerprint(fp(id('a'), '#old', { tag: 'i', v: 'a' }, '2026-01-01T00:00:00.000Z'))
      await store.putFingerprint(fp(id('b'), '#login', { tag: 'button', v: 'b' }, '2026-01-02T00:00:00.000Z'))
      await store.putFingerprint(fp(id('b'), '#old', { tag: 'i', v: 'b' }, '2026-01-02T00:00:00.000Z'))

      // b has none of its own: a's quarantine, ticket and ticket state become b's.
      expect(await store.testNames().mergeTests(id('a'), id('b'), audit)).toEqual({
        results: 1,
        quarantine: 'moved',
        ticket: 'moved',
        fingerprints: 2,
      })
      expect(await store.getQuarantine(id('a'))).toBeNull()
      expect(await store.getQuarantine(id('b'))).toMatchObject({
        reason: 'flaky under jest-junit',
        owner: 'team-auth',
        createdBy: 'bob',
      })
      const trail = await store.listAudit({ testId: id('b') })
      expect(trail).toMatchObject([
        { action: 'quarantine', actor: 'ana', reason: `moved from "${id('a')}" by tests merge: one test` },
      ])
      expect(await store.listAudit({ testId: id('a') })).toMatchObject([
        { action: 'release', actor: 'ana', reason: `merged into "${id('b')}": one test`, record: null },
        { action: 'quarantine', actor: 'bob' },
      ])
      expect(await store.tickets().get(id('a'))).toBeNull()
      expect(await store.tickets().get(id('b'))).toMatchObject({ marker: `fw-${id('a')}`, wanted: 'open' })
      expect((await store.tickets().listStates()).map((t) => t.testId)).toEqual([id('b')])
      // Fingerprints: a locator both had keeps the newer one; the others move.
      expect((await store.getFingerprint(id('b'), '#login'))!.data).toEqual({ tag: 'button', v: 'a' })
      expect((await store.getFingerprint(id('b'), '#new'))!.data).toEqual({ tag: 'a', v: 'a' })
      expect((await store.getFingerprint(id('b'), '#old'))!.data).toEqual({ tag: 'i', v: 'b' })
      expect(await store.getFingerprint(id('a'), '#login')).toBeNull()
      expect((await store.listAuditLog({ kind: 'test' }))[0]).toMatchObject({
        action: 'merge',
        data: { into: id('b'), results: 1, quarantine: 'moved', ticket: 'moved', fingerprints: 2 },
      })

      // d has its own quarantine and ticket: c's quarantine ends (audited) and c's ticket is to be closed.
      await store.putQuarantine(q(id('c'), 'c flaky'), qAudit)
      await store.putQuarantine(q(id('d'), 'd flaky'), qAudit)
      await store.tickets().recordChanges([], [want(id('c')), want(id('d'))])
      // c's ticket is open in the tracker.
      expect((await store.tickets().claimDue('sync', 1000, 60_000, 10)).map((t) => t.testId)).toContain(id('c'))
      const opened = {
        ok: true as const,
        key: '7',
        url: 'https://example.com/7',
        actual: 'open' as const,
        sentComment: null,
      }
      for (const t of ['c', 'd'])
        expect(await store.tickets().recordSync(id(t), 'sync', { ...opened, at: audit.at })).toBe(true)
      const outcome = await store.testNames().mergeTests(id('c'), id('d'), audit)
      expect(outcome).toEqual({ results: 1, quarantine: 'released', ticket: 'closing', fingerprints: 0 })
      expect(await store.getQuarantine(id('c'))).toBeNull()
      expect(await store.getQuarantine(id('d'))).toMatchObject({ reason: 'd flaky' })
      expect((await store.listAudit({ testId: id('c') }))[0]).toMatchObject({
        action: 'release',
        reason: `merged into "${id('d')}", which keeps its own quarantine: one test`,
      })
      expect(await store.tickets().get(id('c'))).toMatchObject({ wanted: 'closed', reason: `merged into ${id('d')}` })
      expect(await store.tickets().get(id('d'))).toMatchObject({ wanted: 'open' })
      // The duplicate is due now, for the next sync to close.
      const due = await store.tickets().claimDue('sync', Date.now(), 60_000, 10)
      expect(due.map((t) => t.testId)).toContain(id('c'))
    })
  })
}
