import { describe, expect, it } from 'vitest'
import { cliSurface, commandsByName, LOCAL } from './surfaces/cli.js'
import { runSurface, FUZZ_TIMEOUT } from './support.js'

/** Every local command with arbitrary option and argument values (test/fuzz/surfaces/cli.ts). */
describe('CLI argument values', () => {
  it('every local command exists, so that the list stays true', () => {
    const commands = commandsByName()
    for (const name of LOCAL) expect(commands.has(name), name).toBe(true)
  })

  it('ends with exit 0, 1 or 2, never an internal error', { timeout: FUZZ_TIMEOUT }, () => runSurface(cliSurface))
})
