import { describe, expect, it } from 'vitest'
import { describeCases, prepareRecording } from '../../src/reporters/build-cases.js'
import { playwrightReport } from '../../src/reporters/playwright-cases.js'
import { attempt, pwRecord, run } from './records.js'

describe('prepareRecording', () => {
  it('layers the run context as ingest does: CI variables, FLAKEWATCH_*, then the suite option', async () => {
    const report = await playwrightReport([pwRecord('a', [attempt(0, 'passed')])], run)
    const ci = { GITLAB_CI: 'true', CI_JOB_ID: '77', CI_COMMIT_SHA: 'def', CI_COMMIT_BRANCH: 'main' }
    const env = { ...ci, FLAKEWATCH_SUITE: 'env' }
    const { batch } = prepareRecording(report, { suite: 'e2e', env, source: 'test' })
    expect(batch.runs[0]!.run).toMatchObject({
      runId: 'gitlab-77[project=chromium]',
      suite: 'e2e',
      revision: 'def',
      branch: 'main',
      jobId: '77',
      env: { project: 'chromium' },
    })
    expect(batch.runs[0]!.results[0]!.test.testId).toBe('e2e::tests/cart.spec.ts::cart › a')
    expect(prepareRecording(report, { suite: undefined, env, source: 'test' }).batch.runs[0]!.run.suite).toBe('env')
    const local = prepareRecording(report, { suite: undefined, env: {}, source: 'test' }).batch.runs[0]!.run
    expect(local).toMatchObject({
      runId: expect.stringMatching(/^local-[0-9a-f]{16}\[project=chromium\]$/),
      suite: 'default',
    })
  })
})

describe('describeCases', () => {
  it('counts failures and flaky passes for the one line a reporter prints', async () => {
    const report = await playwrightReport(
      [pwRecord('a', [attempt(0, 'failed'), attempt(1, 'passed')]), pwRecord('b', [attempt(0, 'failed')])],
      run,
    )
    expect(describeCases(report.cases)).toBe('2 tests (1 failed, 1 flaky)')
    expect(describeCases(report.cases.slice(0, 1))).toBe('1 test (0 failed, 1 flaky)')
  })
})
