import { describe, expect, it } from 'vitest'
import { copyChunks, copyRow } from '../../src/store/postgres/copy-text.js'
import { resolvePostgresUrl } from '../../src/store/postgres/postgres-store.js'
import { attemptCount, prepareBatch, resultCopyRows } from '../../src/store/postgres/prepare-batch.js'
import { batch, flakyResult, result, runMeta } from '../helpers/builders.js'

describe('COPY text format', () => {
  it('escapes the characters that end a field or a row, and writes null as \\N', () => {
    expect(copyRow([1, 'a\tb\nc\rd\\e', null, true, false, 1.5])).toBe('1\ta\\tb\\nc\\rd\\\\e\t\\N\tt\tf\t1.5\n')
    // A literal backslash-N is text, not null.
    expect(copyRow(['\\N', ''])).toBe('\\\\N\t\n')
    expect(copyRow(['a\0b'])).toBe('a\uFFFDb\n')
  })

  it('joins rows into chunks of at least the given size', () => {
    const chunks = [...copyChunks(['aaaa\n', 'bbbb\n', 'cc\n'], 8)]
    expect(chunks).toEqual(['aaaa\nbbbb\n', 'cc\n'])
  })
})

describe('resolvePostgresUrl', () => {
  it('takes ?schema= off the connection string and the password out of the location', () => {
    const r = resolvePostgresUrl('postgres://ci:s3cret@db.internal:5432/fw?schema=team_a&sslmode=require')
    expect(r.schema).toBe('team_a')
    expect(r.connectionString).toBe('postgres://ci:s3cret@db.internal:5432/fw?sslmode=require')
    expect(r.location).not.toContain('s3cret')
    expect(r.location).toContain('schema=team_a')
  })

  it('reads the pool size from ?pool= and keeps it out of the connection string', () => {
    const r = resolvePostgresUrl('postgres://db/fw?pool=4&schema=s')
    expect([r.poolSize, r.connectionString]).toEqual([4, 'postgres://db/fw'])
    expect(resolvePostgresUrl('postgres://db/fw').poolSize).toBeNull()
    expect(() => resolvePostgresUrl('postgres://db/fw?pool=0')).toThrow(/pool=0/)
  })

  it('refuses a schema name that is not a plain identifier', () => {
    expect(() => resolvePostgresUrl('postgres://db/fw?schema=a;drop')).toThrow(/plain identifier/)
    expect(() => resolvePostgresUrl('postgres://db/fw?schema=')).toThrow(/plain identifier/)
  })
})

describe('prepareBatch', () => {
  it('keeps the first result of a repeated test, and each test and message once per batch', () => {
    const run = runMeta('r1', '2026-01-01T00:00:00Z')
    const results = [result('a', 'failed'), result('a', 'passed'), flakyResult('b'), result('c', 'failed')]
    const prepared = prepareBatch(batch(run, results))
    const [p] = prepared.runs
    expect(p!.results.map((r) => [r.test.name, r.status])).toEqual([
      ['a', 'failed'],
      ['b', 'passed'],
      ['c', 'failed'],
    ])
    expect(p!.tests).toBe(3)
    expect(prepared.tests.map((t) => t.name)).toEqual(['a', 'b', 'c'])
    // a's and c's messages differ; b's attempt has a message and a stack.
    expect(prepared.messages).toHaveLength(4)
    expect(attemptCount(p!)).toBe(4)
    expect(p!.attempts.map((a) => [a.result, a.retry])).toEqual([
      [0, 0],
      [1, 0],
      [1, 1],
      [2, 0],
    ])
  })

  it('keeps one attempt per retry number', () => {
    const f = flakyResult('f')
    f.attempts.push({ ...f.attempts[1]!, status: 'failed' })
    const [p] = prepareBatch(batch(runMeta('r1', '2026-01-01T00:00:00Z'), [f])).runs
    expect(p!.attempts.map((a) => [a.retry, a.status])).toEqual([
      [0, 1],
      [1, 0],
    ])
  })

  it('rejects an unknown status before anything is written', () => {
    const bad = { ...result('a', 'passed'), status: 'bogus' as never }
    expect(() => prepareBatch(batch(runMeta('r1', '2026-01-01T00:00:00Z'), [bad]))).toThrow(/unknown result status/)
  })

  it('renders result rows in the column order of the results table', () => {
    const run = runMeta('r1', '2026-01-01T00:00:00Z')
    // The last column is the execution order: given for `a`, unknown (NULL) for `b`.
    const prepared = prepareBatch(batch(run, [result('a', 'failed', { position: 3 }), flakyResult('b')]))
    const rows = [...resultCopyRows(prepared.runs[0]!, 1767225600000, 7, [11, 12], [21, 22, 23])]
    expect(rows).toEqual([
      '1767225600000\t10\t10\t11\t7\t1\t1\t21\t1\tf\tf\tAssertionError\t3\n',
      '1767225600000\t10\t12\t12\t7\t2\t1\t\\N\t0\tt\tf\t\\N\t\\N\n',
    ])
  })
})
