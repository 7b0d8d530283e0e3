import { describe, expect, it } from 'vitest'
import { parseReport, sourceFromBuffer } from '../../src/ingest/index.js'
import { prepareRecording } from '../../src/reporters/build-cases.js'
import { formatCtrf } from '../../src/reporters/ctrf.js'
import { playwrightReport } from '../../src/reporters/playwright-cases.js'
import type { Result } from '../../src/model.js'
import { ctrfSchemaErrors } from '../helpers/ctrf-schema.js'
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

  it('is valid against the official CTRF schema, with every attempt before the final one numbered from 1', async () => {
    const report = await playwrightReport(
      [
        pwRecord('flaky', [attempt(0, 'failed'), attempt(1, 'timedOut'), attempt(2, 'passed')]),
        pwRecord('once', [attempt(0, 'passed')]),
        pwRecord('slow', [attempt(0, 'timedOut')]),
        pwRecord('skipped', [attempt(0, 'skipped')]),
        pwRecord('top', [attempt(0, 'failed')], { describes: [] }),
      ],
      run,
    )
    const env = {
      GITLAB_CI: 'true',
      CI_JOB_ID: '777',
      CI_JOB_URL: 'https://gitlab.example/g/p/-/jobs/777',
      CI_PIPELINE_ID: '4242',
      CI_PIPELINE_URL: 'https://gitlab.example/g/p/-/pipelines/4242',
      CI_COMMIT_SHA: 'abc',
      CI_COMMIT_BRANCH: 'main',
    }
    const { context } = prepareRecording(report, { suite: 'e2e', env, source: 'test' })
    const ctrf = formatCtrf(report, context, { name: 'playwright', version: '1.65.1' })
    expect(ctrfSchemaErrors(ctrf)).toEqual([])
    const flaky = ctrf.results.tests.find((t) => t.name.endsWith('flaky'))!
    expect(flaky.retries).toBe(2)
    expect(flaky.retryAttempts!.map((a) => [a.attempt, a.status])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
    ])
    expect(ctrf.results.tests.find((t) => t.name.endsWith('once'))!.retryAttempts).toBeUndefined()
    expect(flaky.suite).toEqual(['tests/cart.spec.ts'])

    // The build is the job; the pipeline, which CTRF has no field for, rides in the environment's extra.
    expect(ctrf.results.environment).toMatchObject({
      buildId: '777',
      buildUrl: 'https://gitlab.example/g/p/-/jobs/777',
      extra: { pipelineId: '4242', pipelineUrl: 'https://gitlab.example/g/p/-/pipelines/4242' },
    })
    const back = await parseReport(sourceFromBuffer('ctrf.json', JSON.stringify(ctrf)))
    expect(back.meta).toMatchObject({ jobId: '777', pipelineId: '4242', branch: 'main', revision: 'abc' })
    const flakyBack = back.cases.find((c) => c.name.endsWith('flaky'))!
    expect(flakyBack.attempts.map((a) => a.status)).toEqual(['failed', 'failed', 'passed'])
  })

  it('the schema check itself fails on what the old output had (attempt 0, a suite string)', () => {
    const bad = {
      reportFormat: 'CTRF',
      specVersion: '0.0.0',
      results: {
        tool: { name: 'x' },
        summary: { tests: 1, passed: 1, failed: 0, skipped: 0, pending: 0, other: 0, start: 0, stop: 0 },
        tests: [
          {
            name: 'a',
            status: 'passed',
            duration: 1,
            suite: 'cart',
            retryAttempts: [{ attempt: 0, status: 'passed' }],
          },
        ],
      },
    }
    const errors = ctrfSchemaErrors(bad)
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/results\/tests\/0\/suite: must be array/),
        expect.stringMatching(/^\/results\/tests\/0\/retryAttempts\/0\/attempt: must be >= 1/),
      ]),
    )
  })
})
