import { afterAll, describe, it } from 'vitest'
import { apiSurfaces, closeApi } from './surfaces/api.js'
import { runSurface, FUZZ_TIMEOUT } from './support.js'

/**
 * The HTTP API (test/fuzz/surfaces/api.ts): uploads, every read endpoint's query string, rule and quarantine
 * writes, policy previews and MCP tool calls. Nothing answers 5xx; a refused write changes nothing.
 */
afterAll(() => closeApi())

describe('the HTTP API', () => {
  it.each(apiSurfaces.map((s) => [s.name, s] as const))('%s', { timeout: FUZZ_TIMEOUT }, (_, surface) =>
    runSurface(surface),
  )
})
