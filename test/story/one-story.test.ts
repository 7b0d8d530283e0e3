import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestAnalysisJson } from '../../src/analysis/to-analysis-json.js'
import { recommendationLine, testStory } from '../../src/test-story.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'
import { servedDashboard } from './served-dashboard.js'

/**
 * The case of issue 30: a test that passed every run, but only on retry. Its final outcomes say "pass rate 100%,
 * flip 0, stable"; its verdict is flaky and the policy quarantines it on proof, while the score has almost no
 * confidence. `show` and the test page must tell one story about it, in the same words.
 */

const ID = 'unit::src/pay.test.ts::pays'

const summary = (start: number) => ({ tests: 1, passed: 1, failed: 0, skipped: 0, start, stop: start + 500 })

/** A CTRF report of one run in which `pays` failed once and passed on its retry. */
const ctrf = (run: number) =>
  JSON.stringify({
    reportFormat: 'CTRF',
    specVersion: '0.0.0',
    results: {
      tool: { name: 'vitest' },
      summary: summary(1_700_000_000_000 + run * 86_400_000),
      tests: [
        {
          name: 'pays',
          status: 'passed',
          duration: 10,
          flaky: true,
          retries: 1,
          filePath: 'src/pay.test.ts',
          retryAttempts: [{ name: 'pays', status: 'failed', duration: 5, message: `Timeout ${run}000ms exceeded` }],
        },
      ],
    },
  })

let dir: string
let show: string
let json: TestAnalysisJson

beforeAll(async () => {
  dir = testdir({}, 'one-story-')
  for (const run of [1, 2, 3]) {
    writeFileSync(join(dir, `run${run}.json`), ctrf(run))
    const r = await runCli(['ingest', `run${run}.json`, '--suite', 'unit', '--run-id', `run${run}`], { cwd: dir })
    expect(r.exitCode, r.stderr).toBe(0)
  }
  show = (await runCli(['show', ID], { cwd: dir })).stdout
  json = JSON.parse((await runCli(['show', ID, '--json'], { cwd: dir })).stdout) as TestAnalysisJson
}, 60_000)
afterAll(() => cleanup(dir))

describe('one story per test', () => {
  it('the analysis is the contradictory-looking case: flaky on proof, stable by final outcomes, no confidence', () => {
    expect(json).toMatchObject({ verdict: 'flaky', pass_rate: 1, flip_rate: 0, flip_rate_class: 'stable', failures: 0 })
    expect(json.recommendation.action).toBe('quarantine')
    expect(json.confidence).toBeLessThan(0.5)
  })

  it('show: the recommendation rests on the proof, the measures say why they look calm, the score is not trusted', () => {
    const story = testStory(json)
    expect(show).toContain('verdict: flaky — passed on retry in 3 of 3 runs')
    expect(show).toContain(`recommendation: ${recommendationLine(story)}`)
    expect(recommendationLine(story)).toBe('quarantine (priority high): proven flaky (passed on retry)')
    expect(show).toContain('3 runs: 3 passed, all of them only on retry; 0 failed')
    expect(show).toContain('retries turned 3 failures into passes')
    expect(story.scoreNote).toMatch(/^score 0\.\d\d, not yet reliable \(confidence 0\.[0-4]\d: too few runs\)$/)
    expect(show).toContain(story.scoreNote)
    // No line puts a strong word beside a weak confidence.
    for (const line of show.split('\n')) if (/confidence 0\.[0-4]/.test(line)) expect(line).not.toMatch(/high|critical/)
    // The failures it shows are failed attempts, not failed runs.
    expect(show).toContain('Failed attempts')
    expect(show).not.toContain('Failure modes')
  })

  it('a recommendation resting on a weak score is never stronger than low', () => {
    const weak = testStory({
      ...json,
      verdict: 'healthy',
      evidence: [],
      confidence: 0.2,
      recommendation: { action: 'monitor', priority: 'medium', reason: 'flakiness score 0.30 ≥ 0.2' },
    })
    expect(weak.strength).toBe('low')
    expect(testStory({ ...json, evidence: [], failures: 0, verdict: 'healthy' }).failureModes.title).toBe(
      'Earlier failure modes',
    )
  })

  describe('the test page', () => {
    const dashboard = servedDashboard(() => dir)

    it('shows the same words: one verdict chip, the outcomes, the recommendation, failed attempts as such', async () => {
      const page = await dashboard.open(`/tests/${encodeURIComponent(ID)}`)
      await page.locator('.test-page h1').waitFor()
      const verdict = page.locator('section.panel', { has: page.locator('h2:text-is("Verdict")') })
      expect(await verdict.locator('.chip').allTextContents()).toEqual(['flaky'])
      const text = (await verdict.textContent())!
      expect(text).toContain('3 runs: 3 passed, all of them only on retry; 0 failed')
      expect(text).toContain('Recommendation: quarantine (priority high) — proven flaky (passed on retry)')
      expect(text).toContain('retries turned 3 failures into passes')
      expect(text).not.toMatch(/\b0 failures\b/)
      const headings = await page.locator('section.panel h2').allTextContents()
      expect(headings).toContain('Failed attempts')
      expect(headings).not.toContain('Failure modes')
      const score = page.locator('section.panel', { has: page.locator('h2:text-is("Score")') })
      expect(await score.textContent()).toContain(testStory(json).scoreNote)
      await page.close()
    })
  })
})
