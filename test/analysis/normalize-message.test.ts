import { describe, expect, it } from 'vitest'
import { failureModes, normalizeMessage } from '../../src/analysis/index.js'
import { HOUR, history } from './builders.js'

describe('normalizeMessage', () => {
  it.each([
    ['timestamps', 'failed at 2025-03-01T12:34:56.789Z and 12:00:01', 'failed at <ts> and <ts>'],
    ['line numbers', 'TypeError: x is undefined (Component:42)', 'typeerror: x is undefined (component:<line>)'],
    ['hex addresses', 'segfault at 0x7ffd5e8c and 0XDEADBEEF', 'segfault at <hex> and <hex>'],
    ['ports and IP addresses', 'connect ECONNREFUSED 127.0.0.1:5432', 'connect econnrefused <ip>:<port>'],
    [
      'ports on host names',
      'cannot reach localhost:3000 or db.internal:6543',
      'cannot reach localhost:<port> or db.internal:<port>',
    ],
    ['UUIDs', 'order 123e4567-e89b-12d3-a456-426614174000 missing', 'order <uuid> missing'],
    ['unix paths with line and column', 'at /builds/app/src/login.test.ts:42:7', 'at <path>'],
    ['relative and windows paths', 'in ./src/a.ts and C:\\work\\b.ts', 'in <path> and <path>'],
    ['URLs', 'GET http://localhost:8080/api/v1?x=1 failed', 'get <url> failed'],
    ['chai values', 'expected 41 to equal 42', 'expected <value> to equal <value>'],
    ['quoted values', "expected 'loading' to deeply equal [ 1, 2 ]", 'expected <value> to deeply equal <value>'],
    ['jest values', 'Expected: "a"\nReceived: "b"', 'expected: <value> received: <value>'],
    ['junit values', 'expected:<5> but was:<6>', 'expected: <value> but was: <value>'],
    ['durations', 'Timeout of 5000ms exceeded after 2.5 s', 'timeout of <duration> exceeded after <duration>'],
    ['whitespace and case', '  Boom\n\t  BANG  ', 'boom bang'],
  ])('replaces %s', (_, raw, normalised) => {
    expect(normalizeMessage(raw)).toBe(normalised)
  })

  it('gives one signature to one failure mode seen in different runs', () => {
    const a = normalizeMessage('Timeout of 5000ms exceeded at /ci/run-1/src/a.spec.ts:10:3 (2025-01-01T00:00:00Z)')
    const b = normalizeMessage('Timeout of 7000ms exceeded at /ci/run-2/src/a.spec.ts:12:9 (2025-02-03T04:05:06Z)')
    expect(a).toBe(b)
    expect(normalizeMessage('expected 1 to equal 2')).not.toBe(a)
  })

  it('returns the memoised result for a repeated message', () => {
    const m = 'expected 3 to equal 4 at /x/y.ts:1:1'
    expect(normalizeMessage(m)).toBe(normalizeMessage(m))
  })
})

describe('failure modes that differ only by numbers, hashes, ids or paths', () => {
  it.each([
    ['counts', 'expected 3 rows, found 7', 'expected 12 rows, found 0'],
    ['ids inside names', 'worker-3 lost job_1842', 'worker-11 lost job_77'],
    ['commit hashes', 'snapshot 3f2a9c1d stale', 'snapshot e81b07ff stale'],
    ['addresses', 'connect ECONNRESET 10.0.0.5:5432', 'connect ECONNRESET 10.0.3.17:6543'],
    ['paths', 'cannot open /tmp/run-81/cache.db', 'cannot open /tmp/run-9/cache.db'],
  ])('group %s', (_, a, b) => {
    expect(normalizeMessage(a)).toBe(normalizeMessage(b))
  })

  it('gives nine messages that differ by one number one failure mode, not nine', () => {
    const h = history('unit::m.test.ts::n', HOUR)
    for (let i = 0; i < 9; i++) h.fail({ message: `Retry ${i + 1} of 9: queue depth ${100 + i * 13} over limit` })
    const modes = failureModes(h.build().entries)
    expect(modes).toHaveLength(1)
    expect(modes[0]!.count).toBe(9)
  })

  it('keeps different failures apart', () => {
    expect(normalizeMessage('queue depth 3 over limit')).not.toBe(normalizeMessage('queue empty after 3 polls'))
  })
})
