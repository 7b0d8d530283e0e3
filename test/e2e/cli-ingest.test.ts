import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { PUBLIC_FIXTURES } from '../helpers/fixtures.js'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'

const FIXTURES = PUBLIC_FIXTURES

const junit = (cases: string) =>
  `<?xml version="1.0"?><testsuite name="s" timestamp="2026-03-01T10:00:00Z">${cases}</testsuite>`

function count(db: string, sql: string): number {
  const d = new Database(db, { readonly: true })
  try {
    return Number(d.prepare(sql).pluck().get())
  } finally {
    d.close()
  }
}

describe('flakewatch CLI basics', () => {
  it('prints help and version, and exits 2 on usage errors', async () => {
    const help = await runCli(['--help'])
    expect(help.exitCode).toBe(0)
    expect(help.stdout).toMatch(/ingest/)
    expect(help.stdout).toMatch(/gate/)
    const version = await runCli(['--version'])
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version)
    expect((await runCli(['no-such-command'])).exitCode).toBe(2)
    expect((await runCli(['ingest'])).exitCode).toBe(2)
    expect((await runCli(['ingest', 'x.xml', '--format', 'nope'])).exitCode).toBe(2)
    const ingestHelp = await runCli(['ingest', '--help'])
    expect(ingestHelp.stdout).toMatch(/Examples:/)
  })
})

describe('flakewatch ingest on every public fixture', () => {
  it('stores them all, then recognises every one as a duplicate', async () => {
    const dir = testdir()
    const db = join(dir, 'fw.db')
    const first = await runCli(['ingest', FIXTURES, '--db', db, '--json'])
    expect(first.exitCode, first.stderr).toBe(0)
    const summary = JSON.parse(first.stdout)
    expect(summary.failed).toEqual([])
    const files = readdirSync(FIXTURES, { recursive: true, withFileTypes: true }).filter(
      (f) => f.isFile() && !f.name.endsWith('.md'),
    )
    expect(files.length).toBeGreaterThanOrEqual(27)
    expect(new Set(summary.ingested.map((e: { file: string }) => e.file)).size).toBe(files.length)
    // `warnings` appears only where a file earns one.
    for (const e of summary.ingested) {
      expect(
        Object.keys(e)
          .filter((k) => k !== 'warnings')
          .sort(),
      ).toEqual(['attempts', 'file', 'results', 'run_id', 'tests'])
      if ('warnings' in e) expect(e.warnings.every((w: unknown) => typeof w === 'string' && w.length > 0)).toBe(true)
    }
    const warned = summary.ingested
      .filter((e: { warnings?: string[] }) => e.warnings)
      .map((e: { file: string }) => e.file)
    // An older CTRF that is not schema-valid, and reports with year-0001 timestamps (gotestsum's suites, NUnit's mock
    // assembly); every other fixture reads without one.
    expect(warned.every((f: string) => /\/(ctrf|gotestsum|nunit)\//.test(f))).toBe(true)
    const results = count(db, 'SELECT count(*) FROM results')
    expect(results).toBe(summary.ingested.reduce((n: number, e: { results: number }) => n + e.results, 0))
    const again = JSON.parse((await runCli(['ingest', FIXTURES, '--db', db, '--json'])).stdout)
    expect(again.ingested).toEqual([])
    expect(again.duplicates.length).toBe(summary.ingested.length)
    expect(count(db, 'SELECT count(*) FROM results')).toBe(results)
    const replaced = JSON.parse(
      (await runCli(['ingest', join(FIXTURES, 'nosetests'), '--db', db, '--json', '--replace'])).stdout,
    )
    expect(replaced.ingested).toHaveLength(1)
    expect(count(db, 'SELECT count(*) FROM results')).toBe(results)
  })
})

describe('flakewatch ingest on bad input', () => {
  const bad: Record<string, string | Buffer> = {
    'malformed.xml': junit('<testcase name="a">\n<failure>\n</testcase>'),
    'truncated.xml': junit('<testcase name="a"/>').slice(0, 60),
    'truncated.json': '{"results": {"tool": {"name": "x"}, "tests": [',
    'empty.xml': '',
    'binary.xml': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 0xff, 0xfe]),
    'unknown.json': '{"hello": "world"}',
    'laughs.xml': `<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>\n<testsuite><testcase name="&lol2;"/></testsuite>`,
    'xxe.xml': `<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n<testsuite><testcase name="&e;"/></testsuite>`,
    'deep.xml': `<testsuites>${'<testsuite>'.repeat(10_000)}${'</testsuite>'.repeat(10_000)}</testsuites>`,
  }

  it('names each bad file, exits 2, stores the good ones and nothing of the bad', async () => {
    const dir = testdir()
    for (const [name, content] of Object.entries(bad)) writeFileSync(join(dir, name), content)
    writeFileSync(
      join(dir, 'good.xml'),
      junit(
        '<testcase classname="m" name="ok"/><testcase classname="m" name="ko"><failure message="boom"/></testcase>',
      ),
    )
    const db = join(dir, 'fw.db')
    const res = await runCli(['ingest', dir, '--db', db, '--json'])
    expect(res.exitCode).toBe(2)
    const summary = JSON.parse(res.stdout)
    expect(summary.ingested.map((e: { file: string }) => e.file)).toEqual([join(dir, 'good.xml')])
    const failed = new Map<string, string>(
      summary.failed.map((f: { file: string; error: string }) => [f.file.split('/').pop(), f.error]),
    )
    expect([...failed.keys()].sort()).toEqual(Object.keys(bad).sort())
    for (const [name, error] of failed) expect(error).toContain(name)
    expect(failed.get('malformed.xml')).toMatch(/malformed\.xml:\d+/)
    expect(failed.get('laughs.xml')).toMatch(/DOCTYPE|entit/i)
    expect(failed.get('xxe.xml')).not.toContain('root:')
    expect(failed.get('empty.xml')).toMatch(/empty/i)
    expect(failed.get('binary.xml')).toMatch(/binary/i)
    expect(count(db, 'SELECT count(*) FROM results')).toBe(2)
    expect(count(db, 'SELECT count(*) FROM runs')).toBe(1)
  })

  it('prints one clear line per error without --json', async () => {
    const dir = testdir({ 'bad.xml': junit('<testcase name="a">') })
    const res = await runCli(['ingest', join(dir, 'bad.xml'), join(dir, 'missing.xml'), '--db', join(dir, 'fw.db')])
    expect(res.exitCode).toBe(2)
    expect(res.stderr).toMatch(/bad\.xml:\d+/)
    expect(res.stderr).toMatch(/missing\.xml: no such file/)
    expect(res.stderr).not.toMatch(/\n\s+at /)
  })
})

describe('run context', () => {
  it('reads GitLab CI variables, with flags winning', async () => {
    const dir = testdir({ 'r.xml': junit('<testcase classname="m" name="t"/>') })
    const db = join(dir, 'fw.db')
    const env = {
      GITLAB_CI: 'true',
      CI_JOB_ID: '777',
      CI_COMMIT_REF_NAME: 'feature/x',
      CI_COMMIT_SHA: 'abc123',
      CI_PIPELINE_ID: '4242',
      CI_PIPELINE_URL: 'https://gitlab.example/p/4242',
      CI_JOB_URL: 'https://gitlab.example/j/777',
      CI_RUNNER_DESCRIPTION: 'runner-7',
    }
    const res = await runCli(
      [
        'ingest',
        join(dir, 'r.xml'),
        '--db',
        db,
        '--suite',
        'unit',
        '--env',
        'os=linux',
        '--branch',
        'override',
        '--json',
      ],
      { env },
    )
    expect(res.exitCode, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout).ingested[0].run_id).toBe('gitlab-777')
    const d = new Database(db, { readonly: true })
    const run = d.prepare('SELECT * FROM runs').get() as Record<string, unknown>
    d.close()
    expect(run).toMatchObject({
      run_id: 'gitlab-777',
      suite: 'unit',
      branch: 'override',
      revision: 'abc123',
      pipeline_id: '4242',
      pipeline_url: 'https://gitlab.example/p/4242',
      job_url: 'https://gitlab.example/j/777',
      runner_id: 'runner-7',
      started_at: '2026-03-01T10:00:00.000Z',
    })
    expect(JSON.parse(run.env as string)).toEqual({ os: 'linux' })
    const show = await runCli(['show', 'unit::m::t', '--db', db, '--json'])
    expect(JSON.parse(show.stdout).history[0]).toMatchObject({
      run_id: 'gitlab-777',
      revision: 'abc123',
      status: 'passed',
    })
  })
})
