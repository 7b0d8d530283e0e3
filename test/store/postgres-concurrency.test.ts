import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunOutcome } from '../../src/store/store.js'
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js'
import { buildPgStore, resolveTestPg, schemas, sql } from './pg-helpers.js'

const pg = await resolveTestPg()
const run = promisify(execFile)

/** Mirrors pg-writer.mjs: per report, its flaky test has two attempt rows and each other failing test one. */
function expectedAttemptRows(): number {
  let n = 0
  for (let i = 0; i < WRITERS; i++) {
    for (let t = 0; t < TESTS; t++)
      if (t === i) n += 2
      else if ((t + i) % 17 === 0) n += 1
  }
  return n
}

const WRITERS = 20
const TESTS = 500
/** Every report is ingested by its own writer and by the next two: three processes race on each one. */
const COPIES = 3

if (pg.skip !== undefined) {
  console.warn(`PostgreSQL tests skipped: ${pg.skip}`)
  describe.skip(`postgres concurrency (skipped: ${pg.skip})`, () => {
    it(`${WRITERS} processes ingest distinct and duplicate reports at once`, () => undefined)
  })
} else {
  const db = schemas(pg.url)
  let entry: string
  beforeAll(async () => {
    entry = await buildPgStore()
  })
  afterAll(() => db.dropAll())

  describe('postgres concurrency', () => {
    it(`${WRITERS} processes ingesting distinct reports plus duplicates of them all at once store every result once`, async () => {
      const url = db.fresh()
      const writers = Array.from({ length: WRITERS }, (_, w) => {
        const reports = Array.from({ length: COPIES }, (_, k) => (w + k) % WRITERS)
        const script = join(import.meta.dirname, 'fixtures', 'pg-writer.mjs')
        return run(process.execPath, [script, entry, url, JSON.stringify({ reports, tests: TESTS })], {
          timeout: 60_000,
        })
      })
      // No process may fail: execFile rejects on a non-zero exit, and allSettled keeps every stderr for the message.
      const settled = await Promise.allSettled(writers)
      const failures = settled.flatMap((s, w) => (s.status === 'rejected' ? [`writer ${w}: ${String(s.reason)}`] : []))
      expect(failures).toEqual([])

      const outcomes = settled.flatMap((s) =>
        s.status === 'fulfilled'
          ? s.value.stdout
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as RunOutcome)
          : [],
      )
      expect(outcomes).toHaveLength(WRITERS * COPIES)
      for (let i = 0; i < WRITERS; i++) {
        const mine = outcomes.filter((o) => o.runId === `run-${i}`)
        expect(mine.map((o) => o.outcome).sort(), `run-${i}`).toEqual(['duplicate', 'duplicate', 'ingested'])
        expect(mine.find((o) => o.outcome === 'ingested')!.results).toBe(TESTS)
      }

      const [counts] = await sql<Record<string, number>>(
        url,
        `SELECT (SELECT count(*)::int FROM results) AS results,
                  (SELECT count(*)::int FROM (SELECT DISTINCT test, run FROM results) d) AS distinct_results,
                  (SELECT count(*)::int FROM runs) AS runs,
                  (SELECT count(*)::int FROM tests) AS tests,
                  (SELECT count(*)::int FROM reports) AS reports,
                  (SELECT count(*)::int FROM attempts) AS attempts,
                  (SELECT count(*)::int FROM messages) AS messages,
                  (SELECT count(DISTINCT text)::int FROM messages) AS distinct_messages`,
      )
      expect(counts).toEqual({
        results: WRITERS * TESTS,
        distinct_results: WRITERS * TESTS,
        runs: WRITERS,
        tests: TESTS,
        reports: WRITERS,
        attempts: expectedAttemptRows(),
        // 5 failure messages, plus the attempt's timeout message and 20 distinct stacks.
        messages: 5 + 1 + WRITERS,
        distinct_messages: 5 + 1 + WRITERS,
      })
      const perRun = await sql<{ n: number; total: number }>(
        url,
        'SELECT count(*)::int AS n, min(r.total) AS total FROM results s JOIN runs r ON r.id = s.run GROUP BY r.id',
      )
      expect(perRun.every((r) => r.n === TESTS && r.total === TESTS)).toBe(true)
      const migrated = await sql(url, "SELECT key FROM schema_meta WHERE key LIKE 'migration:%'")
      expect(migrated).toHaveLength(POSTGRES_MIGRATIONS.length)
    }, 60_000)
  })
}
