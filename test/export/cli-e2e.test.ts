import { readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli, testdir } from '../helpers/run-cli.js'
import { FIXTURES, SAMPLE, validate } from './helpers.js'

const dir = testdir({}, 'export-e2e-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const db = join(dir, 'fw.db')

describe('flakewatch import/export/publish (built CLI)', () => {
  it('import bundle, then export bundle round-trips the sample through the real CLI', async () => {
    const imp = await runCli(['import', 'bundle', SAMPLE, '--db', db])
    expect(imp.exitCode).toBe(0)
    expect(imp.stderr).toContain('4 runs, 6 tests, 15 results')
    const out = join(dir, 'bundle.json')
    const exp = await runCli(['export', 'bundle', '--db', db, '--days', '400', '-o', out])
    expect(exp).toMatchObject({ exitCode: 0, stdout: '' })
    expect(exp.stderr).toMatch(/^bundle: 4 runs, 6 tests/)
    expect(validate(JSON.parse(readFileSync(out, 'utf8')))).toEqual([])
  })

  it('a v2 bundle: exit 2 and one line naming the file, no stack', async () => {
    const file = join(FIXTURES, 'invalid/schema-version-2.json')
    const r = await runCli(['import', 'bundle', file, '--db', db])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toBe(
      `flakewatch: ${file}: flake-history bundle schema_version 2 is not supported; flakewatch reads version 1\n`,
    )
  })

  it('publish failure: exit 0 with a warning, exit 2 with --strict', async () => {
    // A port that was free a moment ago: connection refused (fetch refuses to even try well-known ports like 1).
    const probe = createServer()
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
    const port = (probe.address() as AddressInfo).port
    await new Promise((r) => probe.close(r))
    const args = [
      'publish',
      'gitlab',
      '--url',
      `http://127.0.0.1:${port}`,
      '--project',
      'g/p',
      '--file',
      SAMPLE,
      '--db',
      db,
    ]
    const env = { CI_JOB_TOKEN: 'x' }
    const soft = await runCli(args, { env })
    expect(soft.exitCode).toBe(0)
    expect(soft.stderr).toMatch(/warning: publish failed: upload: ECONNREFUSED \(gave up after 4 attempts\)/)
    const strict = await runCli([...args, '--strict'], { env })
    expect(strict.exitCode).toBe(2)
    expect(strict.stderr).toMatch(/error: publish failed/)
  }, 30_000)
})
