import { describe, it } from 'vitest'
import { junitRoundTrip, simpleJsonRoundTrip } from './surfaces/reports.js'
import { runSurface, FUZZ_TIMEOUT } from './support.js'

/**
 * Valid reports written from arbitrary cases read back as exactly those cases: names with any printable character
 * (XML and JSON escaping, non-ASCII, astral characters), every status, durations and messages.
 */
describe('valid reports round-trip', () => {
  it('JUnit XML written from arbitrary cases reads back as them', { timeout: FUZZ_TIMEOUT }, () =>
    runSurface(junitRoundTrip),
  )
  it('the simple CI JSON written from arbitrary results reads back as them', { timeout: FUZZ_TIMEOUT }, () =>
    runSurface(simpleJsonRoundTrip),
  )
})
