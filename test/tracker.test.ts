import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ingestFiles } from '../src/pipeline/ingest-files.js'
import { openStore } from '../src/store/open.js'
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

  it('records into, and reads, the history of a test reported under another name (issue 27, item 5)', async () => {
    const store = await openStore({ db: join(mkdtempSync(join(tmpdir(), 'fw-tr-')), 't.db') })
    // A real Jest run: Jest's JSON names the test by its absolute file and ` › `.
    const report = join(import.meta.dirname, 'fixtures/reports/identity/jest-results.json')
    expect((await ingestFiles({ store, inputs: [report], context: { suite: 'unit' } })).failed).toEqual([])
    const known = (await store.listTests()).map((t) => t.testId)
    const expires = known.find((id) => id.endsWith('::Auth › expires the session'))!
    const tracker = TestTracker.fromStore(store)
    // jest-junit's default name for it: no file, the describe path joined with spaces.
    const junitName = 'unit::Auth::Auth expires the session'
    await tracker.recordRun(junitName, 'passed', { at: new Date('2026-12-01T00:00:00Z') })
    expect((await store.listTests()).map((t) => t.testId)).toEqual(known)
    expect((await tracker.getRuns(expires)).map((r) => r.status)).toEqual(['passed', 'failed'])
    expect((await tracker.getRuns(junitName)).map((r) => r.status)).toEqual(['passed', 'failed'])
    // The name is remembered for the next command.
    expect((await store.testNames().listNames({ nameId: junitName })).map((n) => n.testId)).toEqual([expires])
    // A new test still gets its own id.
    await tracker.recordRun('unit::Auth::Auth refreshes the token', 'passed')
    expect(await store.listTests()).toHaveLength(known.length + 1)
    await tracker.close()
  })
})
