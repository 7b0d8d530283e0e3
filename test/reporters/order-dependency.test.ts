import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LeaderboardResponse, TestDetailResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { openStore } from '../../src/store/open.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { config } from '../server/helpers.js'
import { resolveTestPg, schemas } from '../store/pg-helpers.js'
import { BIN, cleanup, ensureDist, projectDir, run } from './helpers.js'

/*
 * Order dependency in a real Vitest project: `sequence.shuffle` runs the tests of one file in a different order
 * per seed, and one test leaves module state behind that another test trips over. The reporter records each run;
 * the analysis must name the polluter, on SQLite (the reporter's store) and on PostgreSQL (its CTRF files ingested).
 */

const RUNS = 16

// Every test writes its name to the run's log as it starts: the order the run really had, to check the store by.
const orderTest = `import { appendFileSync } from 'node:fs'
import { beforeEach, expect, test } from 'vitest'
const cache = new Map()
beforeEach((ctx) => appendFileSync('order-' + process.env.FLAKEWATCH_RUN_ID + '.log', ctx.task.name + '\\n'))
test('parses the header', () => expect('a,b'.split(',')).toHaveLength(2))
test('fills the cache', () => { cache.set('user', 'stale') })
test('formats a date', () => expect(new Date(0).getUTCFullYear()).toBe(1970))
test('reads a fresh cache', () => expect(cache.get('user')).toBeUndefined())
test('sums a column', () => expect([1, 2, 3].reduce((a, b) => a + b)).toBe(6))
`

const vitestConfig = `export default {
  test: {
    include: ['*.check.mjs'],
    sequence: { shuffle: { files: false, tests: true }, seed: Number(process.env.SEED) },
    reporters: [
      ['flakewatch/vitest', { db: 'fw.db', suite: 'unit' }],
      ['flakewatch/vitest', { outputFile: 'ctrf-' + process.env.FLAKEWATCH_RUN_ID + '.json', suite: 'unit' }],
    ],
  },
}
`

const id = (name: string) => `unit::order.check.mjs::${name}`
const POLLUTER = id('fills the cache')
const VICTIM = id('reads a fresh cache')

interface Hint {
  kind: string
  polluter?: string
  failures?: number
  total_failures?: number
  p_value?: number
}

function victimHints(stdout: string): Hint[] {
  const tests = JSON.parse(stdout) as { test_id: string; hints: Hint[] }[]
  return tests.find((t) => t.test_id === VICTIM)?.hints ?? []
}

// Under CI an unreachable server fails here rather than skipping the PostgreSQL half.
const pg = await resolveTestPg()
const pgSchemas = pg.url === undefined ? null : schemas(pg.url)

describe('order dependency in a real Vitest run with sequence.shuffle', () => {
  let dir: string
  let failedRuns = 0

  beforeAll(async () => {
    ensureDist()
    dir = projectDir('order', { 'vitest.config.mjs': vitestConfig, 'order.check.mjs': orderTest })
    for (let seed = 1; seed <= RUNS; seed++) {
      const ran = await run(BIN.vitest, ['run', '--root', '.'], dir, {
        SEED: String(seed),
        FLAKEWATCH_RUN_ID: `shuffle-${seed}`,
      })
      expect(ran.stderr, ran.stdout).toMatch(/flakewatch: recorded 5 tests/)
      if (ran.exitCode !== 0) failedRuns++
    }
  }, 300_000)
  afterAll(async () => {
    if (!process.env.KEEP) cleanup(dir)
    await pgSchemas?.dropAll()
  })

  it('stores the order each run really had, not the order of the source', async () => {
    const store = await openStore({ db: join(dir, 'fw.db') })
    try {
      let shuffled = 0
      for (let seed = 1; seed <= RUNS; seed++) {
        const runId = `shuffle-${seed}`
        const ran = readFileSync(join(dir, `order-${runId}.log`), 'utf8')
          .trim()
          .split('\n')
        const stored: [number, string][] = []
        for (const name of ran) {
          const entry = (await store.getTestHistory(id(name)))!.entries.find((e) => e.run.runId === runId)!
          stored.push([entry.position!, name])
        }
        expect(stored.sort((a, b) => a[0] - b[0]).map(([, name]) => name)).toEqual(ran)
        if (ran.indexOf('fills the cache') > ran.indexOf('reads a fresh cache')) shuffled++
      }
      // The seeds put the polluter after its victim in some runs and before it in others.
      expect(shuffled).toBeGreaterThan(2)
      expect(shuffled).toBeLessThan(RUNS - 2)
      expect(failedRuns).toBe(RUNS - shuffled)
    } finally {
      await store.close()
    }
  })

  it('names the polluter in the victim’s hints, from the reporter’s SQLite store', async () => {
    const analyzed = await run(BIN.flakewatch, ['analyze', '--db', 'fw.db', '--json'], dir)
    expect(analyzed.exitCode, analyzed.stderr).toBe(0)
    const order = victimHints(analyzed.stdout).filter((h) => h.kind === 'order_dependency')
    expect(order).toHaveLength(1)
    expect(order[0]).toMatchObject({ polluter: POLLUTER, failures: failedRuns, total_failures: failedRuns })
    expect(order[0]!.p_value).toBeLessThan(0.0015)
    // Tests that share the file but pollute nothing get no hint.
    const tests = JSON.parse(analyzed.stdout) as { test_id: string; hints: Hint[] }[]
    for (const t of tests.filter((x) => x.test_id !== VICTIM)) {
      expect(
        t.hints.filter((h) => h.kind === 'order_dependency'),
        t.test_id,
      ).toEqual([])
    }
  })

  it('shows the hint in `flakewatch show` and on the dashboard’s test page', async () => {
    const shown = await run(BIN.flakewatch, ['show', VICTIM, '--db', 'fw.db', '--json'], dir)
    expect(shown.exitCode, shown.stderr).toBe(0)
    const hints = (JSON.parse(shown.stdout) as { hints: Hint[] }).hints
    expect(hints.find((h) => h.kind === 'order_dependency')).toMatchObject({ polluter: POLLUTER })
    const text = await run(BIN.flakewatch, ['show', VICTIM, '--db', 'fw.db'], dir)
    expect(text.stdout).toContain('fails after "fills the cache" ran before it in the same run')

    const store = await openSqliteStore(join(dir, 'fw.db'), { readOnly: true })
    const app = await createApp({ store, config: config(), webRoot: null })
    try {
      const res = await app.inject({ method: 'GET', url: `/api/v1/tests/${encodeURIComponent(VICTIM)}` })
      expect(res.statusCode, res.body).toBe(200)
      const detail = res.json<TestDetailResponse>()
      expect(detail.analysis!.hints.find((h) => h.kind === 'order_dependency')).toMatchObject({ polluter: POLLUTER })
      // The reporter refreshed its tests' persisted analyses: a read-only instance, which cannot, lists them all.
      const board = await app.inject({ method: 'GET', url: '/api/v1/leaderboard' })
      expect(board.json<LeaderboardResponse>().total).toBe(5)
    } finally {
      await app.close()
      await store.close()
    }
  })

  it.skipIf(pgSchemas === null)(
    `names it too after its CTRF files are ingested into PostgreSQL${pg.skip ? ` (skipped: ${pg.skip})` : ''}`,
    async () => {
      const url = pgSchemas!.fresh()
      const files = Array.from({ length: RUNS }, (_, i) => `ctrf-shuffle-${i + 1}.json`)
      const ingested = await run(BIN.flakewatch, ['ingest', ...files, '--db', url, '--suite', 'unit'], dir)
      expect(ingested.exitCode, ingested.stderr).toBe(0)
      const analyzed = await run(BIN.flakewatch, ['analyze', '--db', url, '--json'], dir)
      expect(analyzed.exitCode, analyzed.stderr).toBe(0)
      const order = victimHints(analyzed.stdout).find((h) => h.kind === 'order_dependency')
      expect(order).toMatchObject({ polluter: POLLUTER, failures: failedRuns })
    },
  )
})
