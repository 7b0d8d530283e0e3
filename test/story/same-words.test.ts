import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestAnalysisJson } from '../../src/analysis/to-analysis-json.js'
import { ACTION_LABEL, VERDICT_LABEL } from '../../src/test-story.js'
import { runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'
import { servedDashboard } from './served-dashboard.js'

/**
 * Issue 30: the CLI printed `insufficient_data` where the dashboard said "too few runs", and a recommendation of
 * `stable` sat beside a flip-rate class of the same name. The CLI's table and `show`, and the dashboard's
 * leaderboard and test page, now show one word per value; JSON keeps the value.
 */

const FRESH = 'unit::src/new.test.ts::fresh'
const STEADY = 'unit::src/old.test.ts::steady'

const junit = (names: string[], at: string) =>
  `<testsuites><testsuite name="unit" tests="${names.length}" timestamp="${at}">${names
    .map((n) => `<testcase classname="src/${n === 'fresh' ? 'new' : 'old'}.test.ts" name="${n}" time="0.01"/>`)
    .join('')}</testsuite></testsuites>`

/** Splits a table row into its cells (two spaces or more apart). */
const cells = (line: string) => line.trim().split(/ {2,}/)

let dir: string
let table: string[]
let json: TestAnalysisJson[]

beforeAll(async () => {
  dir = testdir({}, 'same-words-')
  // `steady` passes six runs (healthy, nothing to do); `fresh` appears in the last two only (too few runs).
  for (let run = 1; run <= 6; run++) {
    const at = new Date(Date.UTC(2026, 10, run, 12)).toISOString()
    writeFileSync(join(dir, `r${run}.xml`), junit(run >= 5 ? ['steady', 'fresh'] : ['steady'], at))
    const args = ['ingest', `r${run}.xml`, '--suite', 'unit', '--run-id', `r${run}`]
    const r = await runCli(args, { cwd: dir })
    expect(r.exitCode, r.stderr).toBe(0)
  }
  table = (await runCli(['analyze'], { cwd: dir, env: { NO_COLOR: '1' } })).stdout.split('\n')
  json = JSON.parse((await runCli(['analyze', '--json'], { cwd: dir })).stdout) as TestAnalysisJson[]
}, 90_000)
afterAll(() => cleanup(dir))

describe('the same words for the same test', () => {
  it('JSON keeps the machine values', () => {
    const fresh = json.find((a) => a.test_id === FRESH)!
    const steady = json.find((a) => a.test_id === STEADY)!
    expect(fresh.verdict).toBe('insufficient_data')
    expect(steady.verdict).toBe('healthy')
    expect(steady.recommendation.action).toBe('stable')
  })

  it("the CLI's table and show say the words", async () => {
    const header = cells(table[0]!)
    const row = (id: string) => {
      const c = cells(table.find((l) => l.startsWith(id))!)
      return (name: string) => c[header.indexOf(name)]
    }
    const fresh = row(FRESH)
    const steady = row(STEADY)
    const freshJson = json.find((a) => a.test_id === FRESH)!
    expect(fresh('verdict')).toBe(VERDICT_LABEL[freshJson.verdict])
    expect(fresh('verdict')).toBe('too few runs')
    expect(steady('recommendation')).toBe(ACTION_LABEL.stable)
    expect(steady('recommendation')).toBe('no action')
    expect(table.join('\n')).not.toContain('insufficient_data')
    const showFresh = (await runCli(['show', FRESH], { cwd: dir, env: { NO_COLOR: '1' } })).stdout
    expect(showFresh).toMatch(/^verdict: too few runs — /m)
    const showSteady = (await runCli(['show', STEADY], { cwd: dir, env: { NO_COLOR: '1' } })).stdout
    expect(showSteady).toMatch(/^recommendation: no action \(priority low\)/m)
  }, 60_000)

  describe('the dashboard', () => {
    const dashboard = servedDashboard(() => dir)

    it('shows the same words on the leaderboard and the test page', async () => {
      const page = await dashboard.open('/')
      const fresh = page.locator(`table.leaderboard tr[data-test-id="${FRESH}"]`)
      await fresh.waitFor()
      expect(await fresh.locator('td[data-label="Verdict"] .chip').textContent()).toBe('too few runs')
      await page.goto(new URL(`/tests/${encodeURIComponent(STEADY)}`, page.url()).href)
      await page.locator('.test-page h1').waitFor()
      const verdict = page.locator('section.panel', { has: page.locator('h2:text-is("Verdict")') })
      expect(await verdict.textContent()).toContain('Recommendation: no action (priority low)')
      await page.close()
    })
  })
})
