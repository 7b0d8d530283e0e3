import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/main.js'
import type { Io } from '../../src/cli/output.js'
import { openStore } from '../../src/store/open.js'
import { history } from '../helpers/builders.js'

function captureIo(env: NodeJS.ProcessEnv = {}) {
  let out = ''
  let err = ''
  const sink = (add: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        add(chunk.toString())
        cb()
      },
    })
  const io: Io = { stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)), env }
  return { io, out: () => out, err: () => err }
}

interface PreviewJson {
  settings: { key: string; current: unknown; candidate: unknown }[]
  tests: number
  totals: Record<string, number>
  changes: {
    test_id: string
    quarantined: boolean
    current: { verdict: string; action: string; reason: string; action_reason: string | null }
    candidate: { verdict: string; action: string; reason: string; action_reason: string | null }
    why: string[]
  }[]
}

/**
 * Fourteen daily runs: `wobbly` passes only on retry every third run (proven flaky, quarantined by the default
 * policy), `falls` passes eight times and then fails six (broken), `recovering` failed early, was quarantined
 * automatically and has passed seven times in a row since, `steady` always passes. Seven clean runs after 4
 * failures in 7 do not earn a fix at the defaults (20 are needed at α 0.01), but do at α 0.8 with 5 at least.
 */
const EARLIER_FIX = { fixedAlpha: 0.8, fixedMinRuns: 5 }

describe('analyze --policy --diff', () => {
  let dir: string
  let db: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fw-policy-'))
    db = join(dir, 'fw.db')
    const store = await openStore({ db })
    const h = history()
    for (let i = 0; i < 14; i++) {
      h.run(`r${i}`).pass('steady')
      if (i % 3 === 0) h.flaky('wobbly')
      else h.pass('wobbly')
      if (i < 8) h.pass('falls')
      else h.fail('falls')
      if (i < 7 && i % 2 === 0) h.fail('recovering')
      else h.pass('recovering')
    }
    for (const b of h.build()) await store.ingestReport(b)
    await store.putQuarantine(
      {
        testId: 'unit::mod::recovering',
        reason: 'flaky',
        owner: null,
        issueUrl: null,
        createdAt: '2026-01-05T00:00:00.000Z',
        createdBy: 'policy',
        expiresAt: null,
        source: 'auto',
      },
      { action: 'quarantine', actor: 'policy', at: '2026-01-05T00:00:00.000Z', reason: 'flaky', source: 'auto' },
    )
    await store.close()
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  async function preview(candidate: unknown, extra: string[] = []) {
    const file = join(dir, `candidate-${Math.random().toString(36).slice(2)}.json`)
    writeFileSync(file, JSON.stringify(candidate))
    const c = captureIo()
    const code = await runCli(['analyze', '--db', db, '--policy', file, '--diff', ...extra], c.io)
    return { code, out: c.out(), err: c.err() }
  }

  it('prints JSON with the changed settings and each change', async () => {
    const { code, out } = await preview(
      {
        analysis: { verdict: { brokenMinConsecutive: 8, ...EARLIER_FIX } },
        quarantine: { onProvenEvidence: false, onFlakyVerdict: false, minScore: 0.99, releaseAfterPasses: 5 },
      },
      ['--json'],
    )
    expect(code).toBe(0)
    const p = JSON.parse(out) as PreviewJson
    expect(p.tests).toBe(4)
    expect(p.settings.map((s) => s.key).sort()).toEqual([
      'analysis.verdict.brokenMinConsecutive',
      'analysis.verdict.fixedAlpha',
      'analysis.verdict.fixedMinRuns',
      'quarantine.minScore',
      'quarantine.onFlakyVerdict',
      'quarantine.onProvenEvidence',
      'quarantine.releaseAfterPasses',
    ])
    expect(p.settings.find((s) => s.key === 'quarantine.releaseAfterPasses')).toEqual({
      key: 'quarantine.releaseAfterPasses',
      current: 10,
      candidate: 5,
    })
    const by = new Map(p.changes.map((c) => [c.test_id, c]))
    // Proven flaky: quarantined today on proven evidence, not under a candidate that wants a score of 0.99.
    const wobbly = by.get('unit::mod::wobbly')!
    expect(wobbly.current.action).toBe('quarantine')
    expect(wobbly.candidate.action).toBe('none')
    expect(wobbly.why.join(' ')).toMatch(/leave it as it is/)
    // Six failures in a row are broken today, not with eight needed.
    const falls = by.get('unit::mod::falls')!
    expect(falls.current.verdict).toBe('broken')
    expect(falls.candidate.verdict).not.toBe('broken')
    expect(falls.why[0]).toMatch(/^verdict broken → /)
    // Seven clean passes earn a fix at α 0.8 (and five passes at least), so the auto quarantine ends.
    const recovering = by.get('unit::mod::recovering')!
    expect(recovering.quarantined).toBe(true)
    expect(recovering.current.action).toBe('none')
    expect(recovering.candidate.action).toBe('release')
    expect(recovering.candidate.action_reason).toMatch(/^fixed: no failures in the last 7 runs/)
    expect(by.has('unit::mod::steady')).toBe(false)
    expect(p.totals).toMatchObject({ would_release: 1, would_no_longer_quarantine: 1 })
    expect(p.totals.verdict_changed).toBeGreaterThanOrEqual(1)
  })

  it('a candidate equal to the config changes nothing', async () => {
    const { code, out } = await preview({ quarantine: { minScore: 0.6 } }, ['--json'])
    expect(code).toBe(0)
    const p = JSON.parse(out) as PreviewJson
    expect(p.settings).toEqual([])
    expect(p.changes).toEqual([])
  })

  it('prints a table with the arrows of each change', async () => {
    const { code, out } = await preview({ analysis: { verdict: EARLIER_FIX }, quarantine: { releaseAfterPasses: 5 } })
    expect(code).toBe(0)
    expect(out).toMatch(/1 of 4 tests would change/)
    expect(out).toMatch(/quarantine\.releaseAfterPasses\s+10\s+5/)
    expect(out).toMatch(/unit::mod::recovering\s+flaky → healthy\s+none → release/)
  })

  it('refuses a candidate with an unknown key or a bad value, naming the file and the key (exit 2)', async () => {
    const typo = await preview({ quarantine: { minScor: 0.4 } })
    expect(typo.code).toBe(2)
    expect(typo.err).toMatch(/candidate-\w+\.json: quarantine: .*minScor/)
    const bad = await preview({ quarantine: { minScore: 4 } })
    expect(bad.code).toBe(2)
    expect(bad.err).toMatch(/quarantine\.minScore/)
    const notPolicy = await preview({ db: 'other.db' })
    expect(notPolicy.code).toBe(2)
  })

  it('--diff without --policy is a usage error', async () => {
    const c = captureIo()
    expect(await runCli(['analyze', '--db', db, '--diff'], c.io)).toBe(2)
    expect(c.err()).toMatch(/--policy/)
  })

  it('--policy alone prints the leaderboard under the candidate', async () => {
    const file = join(dir, 'strict.json')
    writeFileSync(file, JSON.stringify({ analysis: { verdict: { brokenMinConsecutive: 8 } } }))
    const c = captureIo()
    expect(await runCli(['analyze', '--db', db, '--policy', file, '--json'], c.io)).toBe(0)
    const rows = JSON.parse(c.out()) as { test_id: string; verdict: string }[]
    expect(rows.find((r) => r.test_id === 'unit::mod::falls')!.verdict).not.toBe('broken')
  })
})
