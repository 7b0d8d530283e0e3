import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { uploadWorkerEnv } from '../../src/server/memory-settings.js'

const DIST_SETTINGS = join(import.meta.dirname, '..', '..', 'dist', 'server', 'memory-settings.js')

/** Short-lived allocations, as a server makes them; prints the young generation's size (MB) afterwards. */
const BURST = `{
    let kept = []
    for (let i = 0; i < 2e6; i++) {
      kept.push({ i, s: 'x' + i })
      if (kept.length > 2000) kept = []
    }
    console.log(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576)
  }`

/**
 * The young generation's size (MB) in a fresh Node process after bursts of short-lived allocations, with or
 * without `keepHeapSmall(upToHeapMb)` called first, and after a second burst that follows its check.
 * A process of its own: the flag is process-wide.
 */
function youngGenerationAfterBursts(upToHeapMb: number | null): number[] {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8'
    const { keepHeapSmall } = await import(${JSON.stringify(pathToFileURL(DIST_SETTINGS).href)})
    const check = ${upToHeapMb === null ? '() => {}' : `keepHeapSmall(${upToHeapMb})`}
    ${BURST}
    check()
    ${BURST}`
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  return out.trim().split('\n').map(Number)
}

/**
 * The largest heap (MB) a fresh Node process reaches while it keeps ~40 MB alive and keeps replacing old objects
 * (as the server replaces the analyses an upload touched), with or without `keepHeapSmall` called first.
 */
function heapPeakWhileReplacing(keepSmall: boolean): number {
  const script = `
    const { keepHeapSmall } = await import(${JSON.stringify(pathToFileURL(DIST_SETTINGS).href)})
    ${keepSmall ? 'keepHeapSmall(100_000)' : ''}
    const alive = []
    // Flat strings: a repeat() alone is a tree of shared halves, a few bytes.
    const text = (i) => Buffer.alloc(100_000, 97 + (i % 26)).toString('latin1')
    for (let i = 0; i < 400; i++) alive.push(text(i))
    let peak = 0
    for (let round = 0; round < 3000; round++) {
      alive[round % 400] = text(round)
      peak = Math.max(peak, process.memoryUsage().heapTotal)
    }
    console.log(peak / 1048576)`
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }))
}

describe.skipIf(!existsSync(DIST_SETTINGS))('the server processes memory settings', () => {
  it('lets the old generation grow by 30% over what survived, where V8 lets it grow to several times that', () => {
    // ~40 MB alive. Measured here: 73 MB kept small, 262 MB with V8's own growth (on a loaded machine too).
    expect(heapPeakWhileReplacing(true)).toBeLessThan(130)
    expect(heapPeakWhileReplacing(false)).toBeGreaterThan(180)
  })

  it('keeps the young generation at its initial size once set, where V8 would grow it', () => {
    expect(youngGenerationAfterBursts(null)[0]).toBeGreaterThan(4)
    const kept = youngGenerationAfterBursts(100_000)
    expect(kept).toHaveLength(2)
    for (const mb of kept) expect(mb).toBeLessThanOrEqual(2)
  })

  it('lets the young generation grow again once the heap is past the bound, as a 10M-result analysis makes it', () => {
    const [before, after] = youngGenerationAfterBursts(1)
    expect(before).toBeLessThanOrEqual(2)
    expect(after).toBeGreaterThan(4)
  })
})

describe('the upload worker environment', () => {
  it('limits glibc to two malloc arenas, unless the server was started with a value of its own', () => {
    expect(uploadWorkerEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', MALLOC_ARENA_MAX: '2' })
    expect(uploadWorkerEnv({ MALLOC_ARENA_MAX: '8' }).MALLOC_ARENA_MAX).toBe('8')
  })
})
