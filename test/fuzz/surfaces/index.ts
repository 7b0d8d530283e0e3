import type { Surface } from '../support.js'
import { apiSurfaces, closeApi } from './api.js'
import { cliSurface } from './cli.js'
import { inputSurfaces } from './inputs.js'
import { junitRoundTrip, parserSurfaces, simpleJsonRoundTrip, storeSurface } from './reports.js'

/** Every input surface flakewatch is fuzzed on, by name: what bench/fuzz.mjs runs and regressions replay. */
export const SURFACES: Surface<unknown>[] = [
  ...(parserSurfaces as Surface<unknown>[]),
  storeSurface as Surface<unknown>,
  junitRoundTrip as Surface<unknown>,
  simpleJsonRoundTrip as Surface<unknown>,
  ...inputSurfaces,
  ...apiSurfaces,
  cliSurface as Surface<unknown>,
]

/** Closes what surfaces opened and share (the seeded API app). */
export const closeShared = closeApi
