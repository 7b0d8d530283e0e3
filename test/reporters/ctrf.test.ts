import { describe, expect, it } from 'vitest'
import { parseReport, sourceFromBuffer } from '../../src/ingest/index.js'
import { prepareRecording } from '../../src/reporters/build-cases.js'
import { formatCtrf } from '../../src/reporters/ctrf.js'
import { playwrightReport } from '../../src/reporters/playwright-cases.js'
import type { Result } from '../../src/model.js'
import { attempt, pwRecord, run, startTime } from './records.js'

const shape = (results: Result[]) =>
  results.map((r) => [r.test.testId, r.status, r.flakyOnRetry, r.errorType, r.attempts.map((a) => a.status)])

describe('formatCtrf', () => {
  it('writes a CTRF report that ingest reads back to the same ids, statuses and attempts', async () => {
    const report = await playwrightReport(
      [
        pwRecord('flaky', [attempt(0, 'failed'), attempt(1, 'passed')], { tags: ['@slow'] }),
        pwRecord('slow', [attempt(0, 'timedOut')]),
        pwRecord('skipped', [attempt(0, 'skipped')]),
      ],
      run,
    )
    const env = { FLAKEWATCH_BRANCH: 'main', FLAKEWATCH_REVISION: 'abc' }
    const { context, batch } = prepareRecording(report, { suite: 'e2e', env, source: 'test' })
    const ctrf = formatCtrf(report, context, { name: 'playwright', version: '1.65.1' })
    const start = startTime.getTime()
    const counts = { tests: 3, passed: 1, failed: 1, skipped: 1, flaky: 1 }
    expect(ctrf.results.summary).toMatchObject({ ...counts, start, stop: start + 1500 })
    expect(ctrf.results.environment).toEqual({ branchName: 'main', commit: 'abc' })
    expect(ctrf.results.tests[0]).toMatchObject({ tags: ['slow'], extra: { env: { project: 'chromium' } } })

    const back = await parseReport(sourceFromBuffer('ctrf.json', JSON.stringify(ctrf)))
    expect(back.format).toBe('ctrf')
    const cases = back.cases.map((c) => ({ ...c, tags: [], annotations: [] }))
    const again = prepareRecording({ ...back, cases }, { suite: 'e2e', env: {}, source: 'ctrf' })
    expect(shape(again.batch.runs[0]!.results)).toEqual(shape(batch.runs[0]!.results))
    const runMeta = again.batch.runs[0]!.run
    expect(runMeta).toMatchObject({ branch: 'main', revision: 'abc', startedAt: startTime.toISOString() })
  })
})
