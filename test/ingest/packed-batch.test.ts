import { describe, expect, it } from 'vitest'
import type { Result } from '../../src/model.js'
import { packRunBatch, unpackRunBatch } from '../../src/pipeline/packed-batch.js'
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
    const packed = packRunBatch(batch)
    expect(packed.whole.map((r) => r.test.name)).toEqual(['c', 'e'])
    expect(structuredClone(unpackRunBatch(structuredClone(packed)))).toEqual(batch)
  })

  it('keep an absent position as none', () => {
    const { results } = unpackRunBatch(
      packRunBatch({ run: {} as RunBatch['run'], results: [plain('a', { position: undefined })] }),
    )
    expect(results[0]!.position).toBeNull()
  })
})
