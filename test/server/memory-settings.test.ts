import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { uploadWorkerEnv } from '../../src/server/memory-settings.js'

const DIST_SETTINGS = join(import.meta.dirname, '..', '..', 'dist', 'server', 'memory-settings.js')

/**
 * The young generation's size (MB) in a fresh Node process after a burst of short-lived allocations, with or
 * without `keepYoungGenerationSmall()` called first. A process of its own: the flag is process-wide.
 */
function youngGenerationAfterBurst(keepSmall: boolean): number {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8'
    const { keepYoungGenerationSmall } = await import(${JSON.stringify(pathToFileURL(DIST_SETTINGS).href)})
    if (${keepSmall}) keepYoungGenerationSmall()
    let kept = []
    for (let i = 0; i < 2e6; i++) {
      kept.push({ i, s: 'x' + i })
      if (kept.length > 2000) kept = []
    }
    const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')
    console.log(space.space_size / 1048576)`
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim())
}

describe.skipIf(!existsSync(DIST_SETTINGS))('the server processes memory settings', () => {
  it('keeps the young generation at its initial size once set, where V8 would grow it', () => {
    expect(youngGenerationAfterBurst(false)).toBeGreaterThan(4)
    expect(youngGenerationAfterBurst(true)).toBeLessThanOrEqual(2)
  })
})

describe('the upload worker environment', () => {
  it('limits glibc to two malloc arenas, unless the server was started with a value of its own', () => {
    expect(uploadWorkerEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', MALLOC_ARENA_MAX: '2' })
    expect(uploadWorkerEnv({ MALLOC_ARENA_MAX: '8' }).MALLOC_ARENA_MAX).toBe('8')
  })
})
