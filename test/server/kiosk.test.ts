import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { KioskResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { config, DAY, START, tempDir } from './helpers.js'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c()
})

/**
 * Ten daily runs, long before the wall clock: `once` fails in run 5 only; `broke` (suite `api`) fails from run 6
 * on. The app runs with the production clock, so any panel that read the wall clock would count months.
 */
async function kiosk(): Promise<KioskResponse> {
  const tmp = tempDir()
  const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  for (let i = 0; i < 10; i++) {
    const at = new Date(START + i * DAY).toISOString()
    await store.ingestReport(
      batch(runMeta(`u${i}`, at, { suite: 'unit' }), [
        result('once', i === 5 ? 'failed' : 'passed', {}, 'unit'),
        result('steady', 'passed', {}, 'unit'),
      ]),
    )
    await store.ingestReport(
      batch(runMeta(`a${i}`, at, { suite: 'api' }), [result('broke', i >= 6 ? 'failed' : 'passed', {}, 'api')]),
    )
  }
  const app = await createApp({ store, config: config(), webRoot: null })
  cleanups.push(async () => {
    await app.close()
    await store.close()
    tmp.cleanup()
  })
  const res = await app.inject({ method: 'GET', url: '/api/v1/kiosk' })
  expect(res.statusCode, res.body).toBe(200)
  return res.json<KioskResponse>()
}

describe('kiosk consistency', () => {
  it('evaluates every panel at the analysis as-of time, not the wall clock', async () => {
    const d = await kiosk()
    const newest = START + 9 * DAY
    expect(Date.parse(d.as_of)).toBe(newest + 1)
    expect(d.newest_run_at).toBe(new Date(newest).toISOString())
    const unit = d.suites.find((s) => s.suite === 'unit')!
    // Run 5's failure is four days before the newest run; the wall clock is months later.
    expect(unit.days_without_failure).toBe(4)
    expect(unit.last_failure_at).toBe(new Date(START + 5 * DAY).toISOString())
  })

  it('never shows days without failures for a suite with a test broken now', async () => {
    const d = await kiosk()
    expect(d.broken.map((b) => b.name)).toEqual(['broke'])
    const api = d.suites.find((s) => s.suite === 'api')!
    expect(api.days_without_failure).toBe(0)
    for (const b of d.broken) expect(d.suites.find((s) => s.suite === b.suite)!.days_without_failure).toBe(0)
  })
})
