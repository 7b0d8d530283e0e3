import { describe, expect, it } from 'vitest'
import type { Result } from '../../src/model.js'
import { packRunBatch, TestSlots, unpackRunBatch } from '../../src/store/packed-results.js'
import type { RunBatch } from '../../src/store/store.js'

const test = (name: string, file: string | null = 'f.ts') => ({
  testId: `u::m::${name}`,
  suite: 'u',
  module: 'm',
  name,
  file,
})

const plain = (name: string, over: Partial<Result> = {}): Result => ({
  test: test(name),
  status: 'passed',
  flakyOnRetry: false,
  durationMs: 12.5,
  errorType: null,
  message: null,
  healingOccurred: false,
  attempts: [],
  position: 3,
  ...over,
})

describe('packed run batches (between the parse worker and the store)', () => {
  it('come back as the same results in the same order, plain or whole', () => {
    const batch: RunBatch = {
      run: { runId: 'r', suite: 'u' } as RunBatch['run'],
      results: [
        plain('a'),
        plain('b', { durationMs: null, position: null, status: 'skipped', test: test('b', null) }),
        plain('c', {
          status: 'failed',
          message: 'boom',
          errorType: 'AssertionError',
          attempts: [{ retry: 0, status: 'failed', durationMs: 1, message: 'boom', stack: 'at x' }],
        }),
        plain('d', { flakyOnRetry: true, healingOccurred: true, durationMs: 0, position: 0 }),
        plain('e', { errorType: 'Timeout', status: 'error' }),
        plain('f', { status: 'failed' }),
      ],
    }
    const packed = packRunBatch(batch, new TestSlots())
    expect(packed.whole.map((r) => r.test.name)).toEqual(['c', 'e'])
    expect(structuredClone(unpackRunBatch(structuredClone(packed)))).toEqual(batch)
  })

  it('keep an absent position as none', () => {
    const { results } = unpackRunBatch(
      packRunBatch({ run: {} as RunBatch['run'], results: [plain('a', { position: undefined })] }, new TestSlots()),
    )
    expect(results[0]!.position).toBeNull()
  })

  it('number a test id the same in every batch of one numbering, and start afresh past its bound', () => {
    const slots = new TestSlots()
    const run = {} as RunBatch['run']
    const first = packRunBatch({ run, results: [plain('a'), plain('b')] }, slots)
    const second = packRunBatch({ run, results: [plain('c'), plain('a')] }, slots)
    expect(second.numbering).toBe(first.numbering)
    expect([...first.slots, ...second.slots]).toEqual([0, 1, 2, 0])
    slots.reserve(100_000, 0)
    const third = packRunBatch({ run, results: [plain('c')] }, slots)
    expect(third.numbering).not.toBe(first.numbering)
    expect([...third.slots]).toEqual([0])
    // Long ids end a numbering sooner: its map is bounded in characters too.
    const long = 'x'.repeat(9 * 1024 * 1024)
    const big = packRunBatch({ run, results: [plain(long)] }, slots)
    expect(big.numbering).toBe(third.numbering)
    const bigger = packRunBatch({ run, results: [plain(long)] }, slots)
    expect(bigger.numbering).not.toBe(big.numbering)
  })

  it('carry ids, names and files of any length and characters', () => {
    const odd = plain('x', { test: { testId: 'u::m::€ \0 x', suite: 'u', module: '', name: '€ \0 x', file: '' } })
    const batch: RunBatch = {
      run: {} as RunBatch['run'],
      results: [plain('a'), odd, plain('b', { test: test('b', null) })],
    }
    expect(unpackRunBatch(structuredClone(packRunBatch(batch, new TestSlots())))).toEqual(batch)
  })
})
