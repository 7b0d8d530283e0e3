import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatQuarantineFile, importQuarantineFile, parseQuarantineFile } from '../../src/quarantine/file.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { QuarantineRecord } from '../../src/store/store.js'

const rec = (testId: string, extra: Partial<QuarantineRecord> = {}): QuarantineRecord => ({
  testId,
  reason: 'flaky',
  owner: 'team',
  issueUrl: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  createdBy: 'alice',
  expiresAt: '2026-02-01T00:00:00.000Z',
  source: 'manual',
  ...extra,
})

describe('quarantine file', () => {
  it('is sorted and round-trips', () => {
    const text = formatQuarantineFile({ records: [rec('b'), rec('a', { source: 'auto' })], rules: [] })
    expect(text.indexOf('"a"')).toBeLessThan(text.indexOf('"b"'))
    expect(parseQuarantineFile(text, 'q.json').records).toEqual([rec('a', { source: 'auto' }), rec('b')])
    expect(formatQuarantineFile(parseQuarantineFile(text, 'q.json'))).toBe(text)
  })

  it('accepts minimal hand-written entries as manual quarantines', () => {
    const [r] = parseQuarantineFile(
      '{"version":1,"quarantined":[{"test_id":"x","reason":"see #12"}]}',
      'q.json',
      0,
    ).records
    expect(r).toMatchObject({ testId: 'x', reason: 'see #12', source: 'manual', expiresAt: null })
  })

  it('rejects bad files with the file name', () => {
    expect(() => parseQuarantineFile('{', 'q.json')).toThrow(/q\.json: invalid JSON/)
    expect(() => parseQuarantineFile('{"version":2,"quarantined":[]}', 'q.json')).toThrow(/q\.json: version/)
    expect(() => parseQuarantineFile('{"version":1,"quarantined":[{"test_id":"x"}]}', 'q.json')).toThrow(/reason/)
    expect(() =>
      parseQuarantineFile(
        '{"version":1,"quarantined":[{"test_id":"x","reason":"a"},{"test_id":"x","reason":"b"}]}',
        'q.json',
      ),
    ).toThrow(/twice/)
  })

  it('applies additions, edits and removals on import, each audited', async () => {
    const store = await openSqliteStore(join(mkdtempSync(join(tmpdir(), 'fw-qf-')), 'q.db'))
    await store.putQuarantine(rec('keep'), { action: 'quarantine', actor: 'a', at: 'x', reason: 'r', source: 'manual' })
    await store.putQuarantine(rec('drop'), { action: 'quarantine', actor: 'a', at: 'x', reason: 'r', source: 'manual' })
    const now = Date.parse('2026-01-15T00:00:00Z')
    const res = await importQuarantineFile(
      store,
      { records: [rec('keep', { reason: 'edited' }), rec('new')], rules: [] },
      'bob',
      { now, allowUnknown: true },
    )
    expect(res).toMatchObject({ added: ['new'], updated: ['keep'], removed: ['drop'] })
    expect((await store.listQuarantines()).map((q) => [q.testId, q.reason])).toEqual([
      ['keep', 'edited'],
      ['new', 'flaky'],
    ])
    const audit = await store.listAudit()
    expect(
      audit
        .filter((a) => a.action === 'import')
        .map((a) => a.testId)
        .sort(),
    ).toEqual(['drop', 'keep', 'new'])
    const again = { records: await store.listQuarantines(), rules: [] }
    expect(await importQuarantineFile(store, again, 'bob', { now })).toEqual({
      added: [],
      updated: [],
      removed: [],
      rules: { added: [], updated: [], removed: [] },
    })
    await store.close()
  })
})
