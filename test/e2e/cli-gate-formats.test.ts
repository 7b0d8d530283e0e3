import { copyFileSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { parseReport, sourceFromFile } from '../../src/ingest/index.js'
import { ISSUE_29_REPORTS } from '../helpers/fixtures.js'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'

/**
 * Issue 29: `gate` and `run` on every format added there, through the real CLI. Each report has failures; the
 * gate blocks on them, passes once they are quarantined, and writes the gated JUnit copy beside the report (these
 * formats cannot be rewritten in place). `run` does the same after its command wrote the report.
 */
const REPORTS = ISSUE_29_REPORTS

interface GateJson {
  verdict: string
  blocking: { test_id: string }[]
  quarantined: { test_id: string }[]
  flaky: { test_id: string }[]
}

describe('gate and run on every new format', { timeout: 120_000 }, () => {
  for (const [format, report] of Object.entries(REPORTS)) {
    it(format, async () => {
      const file = join(ROOT, report)
      const parsed = await parseReport(sourceFromFile(file))
      expect(parsed.format).toBe(format)
      const failing = parsed.cases.filter((c) => c.status === 'failed' || c.status === 'error')
      const dir = testdir({}, `gate-${format}-`)
      const gate = async (...extra: string[]) => {
        const r = await runCli(['gate', file, '--suite', 'ci', '--json', ...extra])
        return { code: r.exitCode, json: JSON.parse(r.stdout || '{}') as GateJson, stderr: r.stderr }
      }
      if (failing.length === 0) {
        // Bazel's file has no failure, only a flaky target: the gate passes and names it.
        const ok = await gate()
        expect(ok.code, ok.stderr).toBe(0)
        expect(ok.json.flaky.map((f) => f.test_id)).toEqual(
          parsed.cases.filter((c) => c.flakyOnRetry).map((c) => `ci::${c.module}::${c.name}`),
        )
        return
      }
      const blocked = await gate()
      expect(blocked.code, blocked.stderr).toBe(1)
      const ids = blocked.json.blocking.map((b) => b.test_id).sort()
      expect(ids).toEqual(failing.map((c) => `ci::${c.module}::${c.name}`).sort())

      const q = join(dir, 'q.json')
      const quarantined = ids.map((test_id) => ({
        test_id,
        reason: 'known',
        owner: 'team',
        expires_at: '2999-01-01T00:00:00Z',
      }))
      await import('node:fs').then((fs) => fs.writeFileSync(q, JSON.stringify({ version: 1, quarantined })))
      const gated = join(dir, 'gated.xml')
      const passed = await gate('--quarantine-file', q, '--junit-out', gated)
      expect(passed.code, passed.stderr).toBe(0)
      expect(passed.json.quarantined.map((x) => x.test_id).sort()).toEqual(ids)
      const copy = await parseReport(sourceFromFile(gated))
      expect(copy.format).toBe('junit')
      expect(copy.cases.filter((c) => c.status === 'failed' || c.status === 'error')).toEqual([])
      expect(copy.cases).toHaveLength(parsed.cases.length)

      // run: the command writes the report; flakewatch ingests it, gates it and writes the gated copy.
      const written = join(dir, 'reports', basename(file))
      const cmd = `require('fs').mkdirSync(${JSON.stringify(join(dir, 'reports'))},{recursive:true});require('fs').copyFileSync(${JSON.stringify(file)},${JSON.stringify(written)});process.exit(1)`
      const db = join(dir, 'fw.db')
      const args = ['run', '--db', db, '--suite', 'ci', '--report', `${dir}/reports/*`, '--quarantine-file', q]
      const ran = await runCli([...args, '--junit-out', join(dir, 'run-gated.xml'), '--', process.execPath, '-e', cmd])
      expect(ran.exitCode, ran.stderr).toBe(0)
      expect(readFileSync(join(dir, 'run-gated.xml'), 'utf8')).toContain('<testcase')
      const store = new Database(db, { readonly: true })
      try {
        const n = (store.prepare('SELECT count(*) AS n FROM results').get() as { n: number }).n
        expect(n).toBe(new Set(parsed.cases.map((c) => `${c.module}::${c.name}`)).size)
      } finally {
        store.close()
      }
    })
  }
  it('the fixture for each format exists', () => {
    for (const f of Object.values(REPORTS)) copyFileSync(join(ROOT, f), join(testdir(), 'probe'))
  })
})
