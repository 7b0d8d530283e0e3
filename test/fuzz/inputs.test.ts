import { describe, it } from 'vitest'
import { inputSurfaces } from './surfaces/inputs.js'
import { runSurface, FUZZ_TIMEOUT } from './support.js'

/**
 * The inputs that are not reports (test/fuzz/surfaces/inputs.ts): rule globs and regexes, the quarantine file, the
 * config file and history bundles, each accepted or refused with the documented error naming where.
 */
describe('inputs beyond reports', () => {
  it.each(inputSurfaces.map((s) => [s.name, s] as const))('%s', { timeout: FUZZ_TIMEOUT }, (_, surface) =>
    runSurface(surface),
  )
})
