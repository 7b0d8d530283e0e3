import { cpSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Command } from 'commander'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProgram } from '../../src/cli/program.js'
import { openStore } from '../../src/store/open.js'
import { fakeForge } from '../comment/fake-forge.js'
import { closeFakeGitlabs, fakeGitlab, TOKEN as GITLAB_TOKEN } from '../export/fake-gitlab.js'
import { startReceiver } from '../notify/helpers.js'
import { fakeGithub } from '../tickets/fake-trackers.js'
import { cleanup } from '../reporters/helpers.js'
import { ROOT, runCli, spawnServe, testdir, type ServeProcess } from '../helpers/run-cli.js'
import { offCasing, parseJsonOutput } from '../helpers/wire-casing.js'

/**
 * Every JSON the CLI prints has snake_case keys (docs/concepts.md, "JSON"). Each command that offers JSON output
 * (`--json`, or `--format json`) runs here on a store of the example reports with a quarantine, a rule, a heal and a
 * webhook, against local stand-ins for the servers it talks to; every key of what it prints is checked.
 */

/** Every command path with JSON output, found in the real command tree. */
function jsonCommands(): string[] {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream
  const out: string[] = []
  const walk = (cmd: Command, path: string[]) => {
    const json = cmd.options.some(
      (o) => o.long === '--json' || (o.long === '--format' && (o.argChoices ?? []).includes('json')),
    )
    if (json) out.push(path.join(' '))
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()])
  }
  walk(createProgram({ stdout: sink, stderr: sink, env: {} }), [])
  return out
}

const FLAKY = 'default::shop.checkout.PaymentGatewayTest::charges a card'
const RENAMED = 'default::shop.checkout.PaymentGatewayTest::charges a card (renamed)'
const WRITE_TOKEN = 'casing-write-token-0123456789'
const FORGE_TOKEN = 'forge-token'

let dir: string
let serve: ServeProcess
let forge: Awaited<ReturnType<typeof fakeForge>>
let gitlab: Awaited<ReturnType<typeof fakeGitlab>>
let hooks: Awaited<ReturnType<typeof startReceiver>>
let tracker: Awaited<ReturnType<typeof fakeGithub>>

/**
 * The commands, in order (later ones read what earlier ones stored), with the command paths they stand for; a step
 * without a path only prepares the next.
 */
const cases = (): { path: string | null; argv: string[]; env?: Record<string, string> }[] => [
  { path: 'ingest', argv: ['ingest', 'examples/reports', '--json'] },
  // The first look records every test's state and announces nothing; the quarantines below are announced.
  { path: 'notify', argv: ['notify', '--json', '--wait', '0'] },
  { path: 'analyze', argv: ['analyze', '--json', '--limit', '5'] },
  { path: 'analyze', argv: ['analyze', '--format', 'json', '--verdict', 'flaky'] },
  { path: 'show', argv: ['show', FLAKY, '--json'] },
  { path: 'impact', argv: ['impact', '--json', '--limit', '5'] },
  { path: 'quarantine add', argv: ['quarantine', 'add', FLAKY, '--reason', 'payment sandbox', '--json'] },
  {
    path: 'quarantine rule add',
    argv: ['quarantine', 'rule', 'add', 'api', '--test-id', 'default::api**', '--reason', 'staging', '--json'],
  },
  { path: 'quarantine list', argv: ['quarantine', 'list', '--json'] },
  { path: 'quarantine auto', argv: ['quarantine', 'auto', '--dry-run', '--json'] },
  { path: 'quarantine auto', argv: ['quarantine', 'auto', '--json'] },
  // A test under a second name of its own, merged into the flaky one by a person, then that name split off again.
  { path: 'ingest', argv: ['ingest', 'renamed/renamed.xml', '--json'] },
  { path: 'tests merge', argv: ['tests', 'merge', RENAMED, FLAKY, '--reason', 'renamed in a refactor', '--json'] },
  { path: 'tests split', argv: ['tests', 'split', RENAMED, '--reason', 'a different test after all', '--json'] },
  // Shows the test with its quarantine and audit trail.
  { path: 'show', argv: ['show', FLAKY, '--json'] },
  { path: 'gate', argv: ['gate', 'examples/reports/2026-11-21-unit.xml', '--json'] },
  {
    path: 'run',
    argv: [
      'run',
      '--report',
      'out/*.xml',
      '--json',
      '--',
      process.execPath,
      '-e',
      "require('fs').mkdirSync('out',{recursive:true});require('fs').copyFileSync('examples/reports/2026-11-21-unit.xml','out/junit.xml')",
    ],
  },
  { path: 'list', argv: ['list', '--flaky', '--quarantined', '--format', 'json'] },
  { path: 'list', argv: ['list', '--new', '--format', 'json', 'examples/reports/2026-11-21-e2e.json'] },
  { path: 'notify', argv: ['notify', '--dry-run', '--json'] },
  { path: 'notify', argv: ['notify', '--json', '--wait', '0'] },
  { path: 'notify log', argv: ['notify', 'log', '--json'] },
  { path: 'tickets plan', argv: ['tickets', 'plan', '--config', 'tickets.config.json', '--json'] },
  {
    path: 'tickets sync',
    argv: ['tickets', 'sync', '--config', 'tickets.config.json', '--json'],
    env: { FLAKEWATCH_GITHUB_TOKEN: FORGE_TOKEN },
  },
  { path: 'tickets list', argv: ['tickets', 'list', '--config', 'tickets.config.json', '--json'] },
  { path: 'audit verify', argv: ['audit', 'verify', '--json'] },
  { path: 'audit head', argv: ['audit', 'head', '--json'] },
  { path: 'heals', argv: ['heals', '--json'] },
  { path: 'export bundle', argv: ['export', 'bundle', '--output', 'bundle.json', '--json'] },
  { path: 'import bundle', argv: ['import', 'bundle', 'bundle.json', '--db', 'imported.db', '--json'] },
  { path: null, argv: ['quarantine', 'export'] },
  { path: 'quarantine import', argv: ['quarantine', 'import', '--json'] },
  { path: 'prune', argv: ['prune', '--days', '3650', '--json'] },
  {
    path: 'upload',
    argv: ['upload', 'examples/reports/2026-11-21-api.ctrf.json', '--url', serve.url, '--json'],
    env: { FLAKEWATCH_WRITE_TOKEN: WRITE_TOKEN },
  },
  {
    path: 'comment',
    argv: [
      'comment',
      'examples/reports/2026-11-21-unit.xml',
      ...['--provider', 'github', '--repo', 'acme/shop', '--pr', '12', '--token', FORGE_TOKEN, '--api-url', forge.url],
      '--json',
    ],
  },
  {
    path: 'publish gitlab',
    argv: ['publish', 'gitlab', '--url', gitlab.url, '--project', 'group/sub/app', '--token', GITLAB_TOKEN, '--json'],
  },
]

beforeAll(async () => {
  dir = testdir({}, 'json-casing-')
  cpSync(join(ROOT, 'examples/reports'), join(dir, 'examples/reports'), { recursive: true })
  mkdirSync(join(dir, 'renamed'))
  writeFileSync(
    join(dir, 'renamed/renamed.xml'),
    '<?xml version="1.0"?><testsuite name="s" timestamp="2026-11-22T09:00:00Z">' +
      '<testcase classname="shop.checkout.PaymentGatewayTest" name="charges a card (renamed)"/></testsuite>',
  )
  hooks = await startReceiver()
  writeFileSync(
    join(dir, 'flakewatch.config.json'),
    JSON.stringify({ notifications: { webhooks: [{ name: 'team', url: hooks.url }] } }),
  )
  forge = await fakeForge({ token: FORGE_TOKEN })
  tracker = await fakeGithub({ repo: 'acme/shop', token: FORGE_TOKEN })
  writeFileSync(
    join(dir, 'tickets.config.json'),
    JSON.stringify({ tickets: { tracker: 'github', github: { repo: 'acme/shop', apiUrl: tracker.url } } }),
  )
  gitlab = await fakeGitlab()
  mkdirSync(join(dir, 'server'))
  serve = await spawnServe(['--db', join(dir, 'server/fw.db')], {
    cwd: dir,
    env: { FLAKEWATCH_WRITE_TOKEN: WRITE_TOKEN },
  })
}, 60_000)

afterAll(async () => {
  await serve?.close()
  await forge?.close()
  await tracker?.close()
  await hooks?.close()
  await closeFakeGitlabs()
  cleanup(dir)
})

describe('one casing on the wire: the CLI', () => {
  it('covers every command that prints JSON', () => {
    expect(new Set(cases().flatMap((c) => c.path ?? []))).toEqual(new Set(jsonCommands()))
  })

  it('prints snake_case keys from every one of them', async () => {
    let seen = 0
    for (const c of cases()) {
      if (c.path === 'heals') await addHeal()
      const argv = c.argv
      const res = await runCli(argv, { cwd: dir, env: c.env })
      expect(res.exitCode, `${argv.join(' ')}\n${res.stderr}`).toBeLessThanOrEqual(1)
      if (c.path === null) continue
      const docs = parseJsonOutput(res.stdout)
      expect(docs.length, `${argv.join(' ')} printed no JSON\n${res.stderr}`).toBeGreaterThan(0)
      for (const doc of docs) {
        expect(offCasing(doc), argv.join(' ')).toEqual([])
        seen += JSON.stringify(doc).length
      }
    }
    // Enough was printed to mean something: records, rules, analyses, audits, deliveries.
    expect(seen).toBeGreaterThan(20_000)
    // The webhook it sent is in the same casing.
    expect(hooks.received.length).toBeGreaterThan(0)
    for (const r of hooks.received) expect(offCasing(JSON.parse(r.body))).toEqual([])
  }, 600_000)

  it('the checker itself finds camelCase, PascalCase and kebab-case keys, but not data keys', () => {
    expect(offCasing({ test_id: 'a', issueUrl: null, x: [{ CreatedAt: 1, 'dry-run': true }] })).toEqual([
      '.issueUrl',
      '.x[0].CreatedAt',
      '.x[0].dry-run',
    ])
    expect(offCasing({ 'unit::cart::adds an item': 1, env: { nodeVersion: '22' } })).toEqual([])
  })
})

/** One heal in the store, as the Playwright fixture records it. */
async function addHeal(): Promise<void> {
  const store = await openStore({ db: join(dir, '.flakewatch.db') })
  try {
    await store.appendHeal({
      testId: 'default::checkout.spec.ts::checkout › guest can buy a mug',
      oldLocator: "locator('#pay')",
      newLocator: "getByTestId('pay')",
      score: 0.82,
      breakdown: { tag: 1, id: 0, text: 1 },
      url: 'http://127.0.0.1:3000/checkout',
      at: '2026-11-21T10:00:00.000Z',
      runId: null,
    })
  } finally {
    await store.close()
  }
}
