import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseTestId, TestTracker } from '../src/tracker.js'

describe('TestTracker', () => {
  it('records runs and reads them back newest first', async () => {
    const tracker = await TestTracker.open({ db: join(mkdtempSync(join(tmpdir(), 'fw-tr-')), 't.db') })
    const id = 'unit::cart::adds item'
    await tracker.recordRun(id, 'passed', { durationMs: 5, at: new Date('2026-01-01T00:00:00Z') })
    await tracker.recordRun(id, 'failed', {
      errorType: 'Timeout',
      environment: { os: 'linux' },
      at: new Date('2026-01-02T00:00:00Z'),
    })
    await tracker.recordRun('plain name', 'passed', { healingOccurred: true })
    const runs = await tracker.getRuns(id)
    expect(runs.map((r) => r.status)).toEqual(['failed', 'passed'])
    expect(runs[0]).toMatchObject({
      errorType: 'Timeout',
      environment: { os: 'linux' },
      at: '2026-01-02T00:00:00.000Z',
    })
    expect(await tracker.getRuns(id, 1)).toHaveLength(1)
    expect(await tracker.getAllTestIds()).toEqual(['default::::plain name', id])
    expect((await tracker.getRuns('plain name'))[0]!.healingOccurred).toBe(true)
    expect(await tracker.getRuns('unknown')).toEqual([])
    await tracker.close()
  })

  it('parses test ids with names that contain the separator', () => {
    expect(parseTestId('s::m::a::b')).toMatchObject({ suite: 's', module: 'm', name: 'a::b' })
    expect(parseTestId('m::n')).toMatchObject({ testId: 'default::m::n', suite: 'default', module: 'm', name: 'n' })
  })
})
