import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FlakewatchError, InternalError, ReportLimitError, ReportParseError } from '../../src/errors.js'
import { openReportStream } from '../../src/pipeline/ingest-files.js'
import { IdentityReconciler } from '../../src/pipeline/reconcile-ids.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import type { StoreStats } from '../../src/store/store.js'
import { tempDir } from '../server/helpers.js'
import { countingSource, fuzzParams, FUZZ_TIMEOUT, mutatedProperty, realSeeds } from './support.js'

/**
 * Mutated real reports stored in a real SQLite file, as `flakewatch ingest` stores them: a report is stored whole
 * or not at all. On refusal the store's counts are exactly as before; on success they grew by what the ingest
 * says it stored, and a second ingest of the same bytes stores nothing more.
 */

let store: SqliteStore
let cleanup: () => void
beforeAll(async () => {
  const tmp = tempDir('fw-fuzz-store-')
  cleanup = tmp.cleanup
  store = await openSqliteStore(join(tmp.dir, 'fw.db'))
})
afterAll(async () => {
  await store?.close()
  cleanup?.()
})

const counts = (s: StoreStats) => ({ runs: s.runs, tests: s.tests, results: s.results, attempts: s.attempts })

const seeds = [...realSeeds().values()].flat()
const originals = seeds.map((s) => s.bytes)

async function ingest(name: string, bytes: Buffer, hash: string) {
  const { stream } = await openReportStream(countingSource(name, bytes, 4096), hash, { context: { suite: 'fuzz' } })
  const identities = new IdentityReconciler(store)
  const reconciled = identities.reconcile(stream)
  const outcomes = await store.ingestStream(reconciled.stream, {})
  await reconciled.remember()
  return outcomes
}

describe('a mutated report in a real store', () => {
  it('is stored whole, or refused leaving every count as it was', { timeout: FUZZ_TIMEOUT }, async () => {
    let n = 0
    const seen = { stored: 0, refused: 0 }
    await fc.assert(
      mutatedProperty(originals, async (bytes, label, i) => {
        const name = `${seeds[i]!.path} [${label}]`
        const hash = `fuzz-${n++}`
        const before = counts(await store.stats())
        try {
          const outcomes = await ingest(name, bytes, hash)
          const after = counts(await store.stats())
          const stored = outcomes.filter((o) => o.outcome !== 'duplicate')
          // A report naming a run already stored (its run id, other bytes) adds to that run: no new run row.
          expect(after.runs - before.runs).toBeLessThanOrEqual(stored.length)
          expect(after.results - before.results).toBe(stored.reduce((s, o) => s + o.results, 0))
          expect(after.attempts - before.attempts).toBe(stored.reduce((s, o) => s + o.attempts, 0))
          // The same report again (same content hash) is a duplicate: nothing is counted twice.
          const again = await ingest(name, bytes, hash)
          expect(again.every((o) => o.outcome === 'duplicate')).toBe(true)
          expect(counts(await store.stats())).toEqual(after)
          seen.stored++
        } catch (error) {
          if (!(error instanceof FlakewatchError) || error instanceof InternalError) throw error
          if (error instanceof ReportParseError || error instanceof ReportLimitError) expect(error.file).toBe(name)
          expect(counts(await store.stats())).toEqual(before)
          seen.refused++
        }
      }),
      fuzzParams(60),
    )
    // Both ways out were taken: the mutations neither break every report nor leave every report readable.
    expect(seen.stored).toBeGreaterThan(0)
    expect(seen.refused).toBeGreaterThan(0)
  })
})
