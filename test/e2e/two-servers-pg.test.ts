import { spawn, type ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveTestPg, schemas } from '../store/pg-helpers.js'
import { CLI } from '../helpers/run-cli.js'

const pgTarget = await resolveTestPg()
const TOKEN = 'team-write-token-123'

const junit = (run: number, flakyPasses: boolean) => `<?xml version="1.0"?>
<testsuite name="s" timestamp="2026-03-0${run}T10:00:00Z">
  <properties><property name="ci.revision" value="rev${Math.ceil(run / 2)}"/></properties>
  <testcase classname="cart" name="adds"/>
  <testcase classname="cart" name="&lt;script&gt;alert(1)&lt;/script&gt;"/>
  ${flakyPasses ? '<testcase classname="cart" name="pays"/>' : '<testcase classname="cart" name="pays"><failure message="timeout">t</failure></testcase>'}
</testsuite>`

interface Instance {
  child: ChildProcess
  url: string
}

function startServe(db: string): Promise<Instance> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--db', db, '--port', '0'], {
      env: { ...process.env, FLAKEWATCH_WRITE_TOKEN: TOKEN, FLAKEWATCH_LOG_LEVEL: 'warn' },
    })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
      const m = /http:\/\/[^\s]+\//.exec(out)
      if (m) resolve({ child, url: m[0] })
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)))
  })
}

/** The answer without the moment it was computed, which is all that may differ between instances. */
async function get(i: Instance, path: string): Promise<unknown> {
  const res = await fetch(new URL(path, i.url))
  expect(res.status, path).toBe(200)
  return JSON.parse(await res.text(), (key, value: unknown) => (key === 'generated_at' ? undefined : value))
}

describe.skipIf(pgTarget.skip !== undefined)('two stateless serve instances on one PostgreSQL database', () => {
  const pgs = schemas(pgTarget.url ?? '')
  let a: Instance
  let b: Instance

  beforeAll(async () => {
    const db = pgs.fresh()
    ;[a, b] = await Promise.all([startServe(db), startServe(db)])
  }, 60_000)

  afterAll(async () => {
    for (const i of [a, b]) i?.child.kill('SIGTERM')
    await new Promise((r) => setTimeout(r, 500))
    await pgs.dropAll()
  })

  it('accepts uploads through either instance and gives identical answers', { timeout: 90_000 }, async () => {
    for (let run = 1; run <= 6; run++) {
      const target = run % 2 ? a : b
      const res = await fetch(new URL(`api/v1/reports?suite=web&run_id=job-${run}&branch=main`, target.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/xml' },
        body: junit(run, run % 3 !== 0),
      })
      expect(res.status, await res.clone().text()).toBe(201)
    }
    // The same report again, through the other instance: a duplicate, not a second copy.
    const dup = await fetch(new URL('api/v1/reports?suite=web&run_id=job-1&branch=main', b.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/xml' },
      body: junit(1, true),
    })
    expect(((await dup.json()) as { duplicates: unknown[] }).duplicates).toHaveLength(1)

    const quarantine = await fetch(new URL(`api/v1/quarantine/${encodeURIComponent('web::cart::pays')}`, a.url), {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'flaky on CI', owner: 'cart-team' }),
    })
    expect(quarantine.status).toBeLessThan(300)

    for (const path of [
      'api/v1/leaderboard',
      'api/v1/heatmap',
      'api/v1/runs',
      'api/v1/quarantine',
      'api/v1/tests/web%3A%3Acart%3A%3Apays/history',
    ]) {
      // Each instance notices the other's writes within its probe interval (5 s).
      await expect
        .poll(async () => JSON.stringify(await get(b, path)), { timeout: 30_000, interval: 1000 })
        .toBe(JSON.stringify(await get(a, path)))
    }
    const runs = (await get(a, 'api/v1/runs')) as { runs?: unknown[] } | unknown[]
    expect(Array.isArray(runs) ? runs.length : runs.runs?.length).toBe(6)
  })
})
