import { describe, it } from 'vitest'
import { storeSurface } from './surfaces/reports.js'
import { runSurface, FUZZ_TIMEOUT } from './support.js'

/**
 * Mutated real reports stored in a real SQLite file, as `flakewatch ingest` stores them: a report is stored whole
 * or not at all, and a second ingest of the same report adds nothing (test/fuzz/surfaces/reports.ts).
 */
describe('a mutated report in a real store', () => {
  it('is stored whole, or refused leaving every count as it was', { timeout: FUZZ_TIMEOUT }, () =>
    runSurface(storeSurface),
  )
})
