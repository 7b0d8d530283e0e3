import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  exportBundle,
  exportCsv,
  exportStats,
  printExportBundle,
  printExportCsv,
  printExportStats,
} from '../../src/cli/commands/export.js'
import { importBundleFile, printImport } from '../../src/cli/commands/import.js'
import { gitlabToken, printPublish, publish } from '../../src/cli/commands/publish.js'
import type { Io } from '../../src/cli/output.js'
import { InputError } from '../../src/errors.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { collector, SAMPLE, tempDir, validate } from './helpers.js'

const tmp = tempDir('fw-cli-export-')
afterAll(tmp.cleanup)

function fakeIo(env: NodeJS.ProcessEnv = {}) {
  const stdout = collector()
  const stderr = collector()
  const io: Io = { stdout, stderr, env }
  return { io, out: () => stdout.text(), err: () => stderr.text() }
}

/** A store with a few days of runs of three tests, one of them with a formula-like name. */
async function seededDb(name: string): Promise<string> {
  const db = join(tmp.dir, name)
  const store = await openSqliteStore(db)
  const day = 86_400_000
  for (let i = 0; i < 6; i++) {
    const at = new Date(Date.now() - (6 - i) * day).toISOString()
    await store.ingestReport(
      batch(runMeta(`r${i}`, at, { env: { gfx_api: i % 2 ? 'dx12' : 'vulkan' }, jobStatus: 'success' }), [
        result('steady', 'passed'),
        result('wobbly', i % 2 ? 'failed' : 'passed'),
        result('=2+5', 'passed'),
      ]),
    )
  }
  await store.close()
  return db
}

describe('export commands', () => {
  it('export bundle -o writes a valid bundle atomically and reports a summary', async () => {
    const db = await seededDb('b.db')
    const file = join(tmp.dir, 'out', '..', 'bundle.json')
    const { io, err, out } = fakeIo()
    const r = await exportBundle({ db, output: file, days: '30' }, io)
    printExportBundle(r, { output: file }, io)
    expect(r).toMatchObject({ file, runs: 6, tests: 3 })
    const bundle = JSON.parse(readFileSync(file, 'utf8')) as unknown
    expect(validate(bundle)).toEqual([])
    expect(err()).toMatch(/^bundle: 6 runs, 3 tests, 0\.00 MB → /)
    expect(out()).toBe('')
    expect(readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp'))).toEqual([])
  })

  it('export bundle without -o streams the bundle to stdout; --json summary then goes nowhere near it', async () => {
    const db = await seededDb('s.db')
    const { io, out, err } = fakeIo()
    const r = await exportBundle({ db, contextKeys: 'gfx_api', classification: 'verdict' }, io)
    printExportBundle(r, { json: true }, io)
    const bundle = JSON.parse(out()) as { runs: { gfx_api: string }[]; tests: { overall: { verdict?: string } }[] }
    expect(validate(bundle)).toEqual([])
    expect(bundle.runs[0]!.gfx_api).toBe('vulkan')
    expect(bundle.tests.every((t) => typeof t.overall.verdict === 'string')).toBe(true)
    expect(err()).toMatch(/^bundle: 6 runs, 3 tests/)
  })

  it('export bundle: bad flags are InputErrors that name the flag, and leave no file', async () => {
    const db = await seededDb('bad.db')
    const file = join(tmp.dir, 'never.json')
    await expect(exportBundle({ db, output: file, days: 'two' }, fakeIo().io)).rejects.toThrow(InputError)
    await expect(exportBundle({ db, output: file, days: '0' }, fakeIo().io)).rejects.toThrow(/--days/)
    await expect(exportBundle({ db, output: file, contextKeys: 'run_id' }, fakeIo().io)).rejects.toThrow(
      /--context-keys/,
    )
    await expect(exportBundle({ db, output: file, classification: 'x' }, fakeIo().io)).rejects.toThrow(
      /--classification/,
    )
    expect(existsSync(file)).toBe(false)
    const nowhere = join(tmp.dir, 'no-such-dir', 'b.json')
    await expect(exportBundle({ db, output: nowhere }, fakeIo().io)).rejects.toThrow(`${nowhere}: cannot write: ENOENT`)
  })

  it('export csv: a row per test, formula cells defused', async () => {
    const db = await seededDb('c.db')
    const { io, out } = fakeIo()
    await printExportCsv(await exportCsv({ db }, io), {}, io)
    const lines = out().trimEnd().split('\r\n')
    expect(lines[0]).toMatch(/^test_id,suite,module,name,runs,passes,fails,/)
    expect(lines).toHaveLength(4)
    expect(lines.find((l) => l.includes('=2+5'))).toMatch(/^unit::mod::=2\+5,unit,mod,'=2\+5,6,6,0,/)
  })

  it('export stats: the blog’s { test: success_rate } map', async () => {
    const db = await seededDb('st.db')
    const { io, out } = fakeIo()
    const file = join(tmp.dir, 'stats.json')
    printExportStats(await exportStats({ db }, io), {}, io)
    const stats = JSON.parse(out()) as Record<string, number>
    expect(Object.keys(stats).sort()).toEqual(['unit::mod::=2+5', 'unit::mod::steady', 'unit::mod::wobbly'])
    expect(stats['unit::mod::steady']).toBe(1)
    expect(stats['unit::mod::wobbly']).toBeGreaterThan(0)
    expect(stats['unit::mod::wobbly']).toBeLessThan(1)
    printExportStats(await exportStats({ db }, io), { output: file }, io)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(stats)
  })
})

describe('import command', () => {
  it('imports the sample and warns about cells filed under another context than their run', async () => {
    const db = join(tmp.dir, 'imp.db')
    const { io, err } = fakeIo()
    const s = await importBundleFile(SAMPLE, { db }, io)
    printImport(s, {}, io)
    expect(err()).toContain(`imported ${SAMPLE}: 4 runs, 6 tests, 15 results\n`)
    expect(err()).toMatch(/warning: 2 result\(s\) sit in a context that differs from their run's/)
    const again = fakeIo()
    printImport(await importBundleFile(SAMPLE, { db }, again.io), {}, again.io)
    expect(again.err()).toContain('4 run(s) already stored (use --replace to overwrite)')
  })
})

describe('publish command', () => {
  async function gitlab(status = 201) {
    const seen: { method: string; url: string; headers: IncomingHttpHeaders; bytes: number }[] = []
    const server = createServer((req, res) => {
      let bytes = 0
      req.on('data', (c: Buffer) => (bytes += c.length))
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, bytes })
        res.writeHead(req.method === 'PUT' ? status : 200, { 'content-type': 'application/json' })
        res.end(req.method === 'GET' ? '[]' : '{}')
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return { url, seen, close: () => new Promise((r) => server.close(r)) }
  }

  it('in GitLab CI: URL, project and JOB-TOKEN come from CI variables; the bundle is exported from the store', async () => {
    const db = await seededDb('p.db')
    const gl = await gitlab()
    const { io, err } = fakeIo({ CI_SERVER_URL: gl.url, CI_PROJECT_ID: '7', CI_JOB_TOKEN: 'job-tok' })
    const r = await publish({ db, days: '30' }, io)
    printPublish(r, {}, io)
    await gl.close()
    expect(r.ok).toBe(true)
    expect(gl.seen[0]).toMatchObject({ method: 'PUT', bytes: r.bundle!.bytes })
    expect(gl.seen[0]!.url).toMatch(/^\/api\/v4\/projects\/7\/packages\/generic\/flake-history\/\d+\/bundle\.json$/)
    expect(gl.seen[0]!.headers['job-token']).toBe('job-tok')
    expect(err()).toMatch(/^published flake-history version \d+ \(6 runs, 3 tests, 0\.00 MB\): http/)
    expect(err()).not.toContain('job-tok')
  })

  it('a failure is a warning and ok: false (exit 0), unless --strict', async () => {
    const gl = await gitlab(401)
    const env = { CI_JOB_TOKEN: 'bad' }
    const soft = fakeIo(env)
    const r = await publish({ url: gl.url, project: 'g/p', file: SAMPLE }, soft.io)
    printPublish(r, {}, soft.io)
    expect(r).toMatchObject({ ok: false })
    expect(soft.err()).toMatch(/^warning: publish failed: upload: GitLab rejected the token \(401 Unauthorized\)/)
    expect(soft.err()).toContain('pass --strict')
    const strict = fakeIo(env)
    printPublish(
      await publish({ url: gl.url, project: 'g/p', file: SAMPLE, strict: true }, strict.io),
      { strict: true },
      strict.io,
    )
    expect(strict.err()).toMatch(/^error: publish failed/)
    await gl.close()
  })

  it('missing settings and unreadable files are publish failures too, with the fix named', async () => {
    const { io } = fakeIo()
    expect(await publish({ project: 'p', token: 't' }, io)).toEqual({
      ok: false,
      error: 'no GitLab URL: pass --url or run in GitLab CI (CI_SERVER_URL)',
    })
    expect((await publish({ url: 'http://x', token: 't' }, io)).error).toMatch(/no project/)
    expect((await publish({ url: 'http://x', project: 'p' }, io)).error).toMatch(/no GitLab token/)
    expect(
      (await publish({ url: 'http://x', project: 'p', token: 't', file: join(tmp.dir, 'nope.json') }, io)).error,
    ).toMatch(/ENOENT/)
    expect((await publish({ url: 'http://x', project: 'p', token: 't', keepDays: 'week' }, io)).error).toMatch(
      /--keep-days/,
    )
  })

  it('--token wins over CI_JOB_TOKEN and is sent as PRIVATE-TOKEN', () => {
    expect(gitlabToken({ token: 'pat' }, { CI_JOB_TOKEN: 'job' })).toEqual({ kind: 'private', value: 'pat' })
    expect(gitlabToken({}, { CI_JOB_TOKEN: 'job' })).toEqual({ kind: 'job', value: 'job' })
    expect(gitlabToken({}, {})).toBeNull()
  })
})
