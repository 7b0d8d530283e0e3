import { describe, expect, it } from 'vitest'
import { presentedPosition, writtenCookie } from '../../src/server/read-routing.js'
import { formatLsn, parseLsn } from '../../src/store/postgres/replication.js'

describe('WAL positions on the wire', () => {
  it('reads and prints positions as PostgreSQL does, and orders them by byte', () => {
    expect(parseLsn('0/3000000')).toBe(0x3000000n)
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n)
    expect(formatLsn(parseLsn('16/B374D848')!)).toBe('16/B374D848')
    // The low half is not zero-padded, so text order is not byte order: 1/10 comes after 0/FFFFFFFF.
    expect(parseLsn('1/10')! > parseLsn('0/FFFFFFFF')!).toBe(true)
  })

  it('refuses anything else that a header or cookie may carry', () => {
    for (const bad of ['', '0', '/1', '0/', 'G/1', '123456789/0', '0/1; drop', '0/1/2', '-1/0']) {
      expect(parseLsn(bad), bad).toBeNull()
    }
  })

  it('takes the later of the header and the cookie, and ignores other cookies and garbage', () => {
    const cookie = writtenCookie('0/5000000').split(';')[0]!
    expect(presentedPosition({ cookie: `a=1; ${cookie}; b=2` })).toBe(0x5000000n)
    expect(presentedPosition({ 'x-flakewatch-written': '0/6000000', cookie })).toBe(0x6000000n)
    expect(presentedPosition({ 'x-flakewatch-written': '0/4000000', cookie })).toBe(0x5000000n)
    expect(
      presentedPosition({ 'x-flakewatch-written': 'nonsense', cookie: 'flakewatch_written=also nonsense' }),
    ).toBeNull()
    expect(presentedPosition({})).toBeNull()
  })

  it('hands the position to browsers in a cookie scripts cannot read, for a while', () => {
    expect(writtenCookie('0/5000000')).toMatch(
      /^flakewatch_written=0\/5000000; Path=\/; Max-Age=\d+; SameSite=Lax; HttpOnly$/,
    )
  })
})
