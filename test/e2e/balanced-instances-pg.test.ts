import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRoundRobinProxy, type RoundRobinProxy } from '../helpers/round-robin-proxy.js'
import { runCli, spawnServe, type ServeProcess } from '../helpers/run-cli.js'
import { resolveTestPg, schemas, sql } from '../store/pg-helpers.js'

const pgTarget = await resolveTestPg()
const TOKEN = 'balanced-write-token-123'
const TESTS = 40

/** A JUnit report of `TESTS` tests on the given day; test 7 fails on odd days. */
function junit(day: number): string {
  const cases = Array.from({ length: TESTS }, (_, i) =>
    i === 7 && day % 2
      ? `<testcase classname="cart" name="t${i}"><failure message="x">x</failure></testcase>`
      : `<testcase classname="cart" name="t${i}"/>`,
  )
  return `<?xml version="1.0"?><testsuite name="s" timestamp="2026-03-${String(day).padStart(2, '0')}T10:00:00Z">${cases.join('')}</testsuite>`
}

/** `flakewatch serve` on the store, on `port` (0: any free one). */
const startServe = (db: string, port = 0): Promise<ServeProcess> =>
  spawnServe(['--db', db, '--port', String(port)], { env: { FLAKEWATCH_WRITE_TOKEN: TOKEN } })

/** The answer without the moment it was computed, which is all that may differ between instances. */
async function answer(base: string, path: string): Promise<string> {
  const res = await fetch(new URL(path, base))
  expect(res.status, path).toBe(200)
  return JSON.stringify(
    JSON.parse(await res.text(), (key, value: unknown) => (key === 'generated_at' ? undefined : value)),
  )
}

const READS = [
  'api/v1/leaderboard',
  'api/v1/heatmap',
  'api/v1/runs',
  'api/v1/trends',
  'api/v1/kiosk',
  `api/v1/tests/${encodeURIComponent('web::cart::t7')}/history`,
]

describe.skipIf(pgTarget.skip !== undefined)('serve instances behind a round-robin balancer', () => {
  const pgs = schemas(pgTarget.url ?? '')
  const dir = mkdtempSync(join(tmpdir(), 'fw-balanced-'))
  let db: string
  const instances: ServeProcess[] = []
  let proxy: RoundRobinProxy

  beforeAll(async () => {
    db = pgs.fresh()
    instances.push(...(await Promise.all([startServe(db), startServe(db)])))
    proxy = await startRoundRobinProxy(instances.map((i) => `${i.url}/`))
  }, 60_000)

  afterAll(async () => {
    await proxy?.close()
    for (const i of instances) await i.close()
    await pgs.dropAll()
    rmSync(dir, { recursive: true, force: true })
  })

  /** `flakewatch upload` of one day's report through the balancer, as CI would send it. */
  async function upload(day: number) {
    const file = join(dir, `day-${day}.xml`)
    writeFileSync(file, junit(day))
    const res = await runCli(
      ['upload', file, '--url', proxy.url, '--suite', 'web', '--run-id', `job-${day}`, '--retries', '5', '--json'],
      { env: { FLAKEWATCH_WRITE_TOKEN: TOKEN } },
    )
    const summary = JSON.parse(res.stdout) as {
      uploaded: { status: number; response: { ingested: unknown[]; duplicates: unknown[] } }[]
      failed: unknown[]
    }
    return { ...res, summary }
  }

  /** Results stored for a run: a report stored twice would count twice. */
  async function storedResults(runId: string): Promise<number> {
    const rows = await sql<{ n: number }>(
      db,
      'SELECT count(*)::int AS n FROM results r JOIN runs u ON u.id = r.run WHERE u.run_id = $1',
      [runId],
    )
    return rows[0]!.n
  }

  /**
   * Every instance gives every read the same answer: each sees the others' writes within its probe (1 s). An
   * instance that kept running applies an upload to its analysis at the analysis clock it has, while one that just
   * started analyses at the newest run; the kiosk's clock (`as_of`, days without failure) then agrees at the
   * former's next full rebuild, at most a minute later (docs/scaling.md#many-instances).
   */
  async function expectSameAnswers(): Promise<void> {
    // Every read at each look, so that the waits for the instances' rebuilds overlap instead of adding up.
    const disagreeing = async () => {
      const paths: string[] = []
      for (const path of READS) {
        if (new Set(await Promise.all(instances.map((i) => answer(i.url, path)))).size > 1) paths.push(path)
      }
      return paths
    }
    await expect.poll(disagreeing, { timeout: 120_000, interval: 1000 }).toEqual([])
    for (const path of READS) {
      // And through the balancer, whichever instance it picks.
      const first = await answer(instances[0]!.url, path)
      expect([await answer(proxy.url, path), await answer(proxy.url, path)]).toEqual([first, first])
    }
  }

  it('spreads uploads and reads over both instances, which answer alike', { timeout: 240_000 }, async () => {
    for (let day = 1; day <= 4; day++) {
      const { summary } = await upload(day)
      expect(summary.uploaded.map((u) => u.status)).toEqual([201])
    }
    expect(new Set(proxy.routed)).toEqual(new Set([0, 1]))
    await expectSameAnswers()
  })

  it(
    'loses nothing when an instance is killed mid-upload: the retry lands on the other',
    { timeout: 240_000 },
    async () => {
      let victim = -1
      proxy.gate = async (moment, target, path) => {
        if (moment !== 'body-end' || !path.endsWith('/reports') || victim !== -1) return
        victim = target
        await instances[target]!.crash()
      }
      const { summary, stderr } = await upload(5)
      proxy.gate = null
      expect(victim).not.toBe(-1)
      expect(stderr).toMatch(/retry 1/)
      expect(summary.uploaded.map((u) => u.status)).toEqual([201])
      expect(await storedResults('job-5')).toBe(TESTS)

      // Back on its port: the balancer sends it requests again, and it answers as the other does.
      instances[victim] = await startServe(db, Number(new URL(instances[victim]!.url).port))
      await expectSameAnswers()
    },
  )

  it('stores a report once when an instance dies between its commit and its answer', { timeout: 240_000 }, async () => {
    let victim = -1
    proxy.gate = async (moment, target, path) => {
      if (moment !== 'answer' || !path.endsWith('/reports') || victim !== -1) return
      victim = target
      await instances[target]!.crash()
      return 'drop'
    }
    const { summary, stderr } = await upload(6)
    proxy.gate = null
    expect(victim).not.toBe(-1)
    expect(stderr).toMatch(/retry 1/)
    // The retry, on the other instance, finds the report stored: a duplicate, recognised as one.
    expect(summary.uploaded.map((u) => u.status)).toEqual([200])
    expect(summary.uploaded[0]!.response.duplicates).toHaveLength(1)
    expect(await storedResults('job-6')).toBe(TESTS)

    instances[victim] = await startServe(db, Number(new URL(instances[victim]!.url).port))
    await expectSameAnswers()
  })
})
