import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseReport, sourceFromFile } from '../../src/ingest/index.js'
import { caseNamed, summarize } from './helpers.js'

/*
 * Reports our own real-runner test wrote (FLAKEWATCH_UPDATE_FIXTURES=1 npx vitest run test/ingest/real-runners),
 * kept so that the dialects they show are checked without starting any runner or browser. No public sample
 * shows a Playwright JSON `flaky` test or a Jest retry, which these do.
 */
const DIR = join(import.meta.dirname, '..', 'fixtures', 'reports')
const files = readdirSync(DIR, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile())
  .map((e) => relative(DIR, join(e.parentPath, e.name)))
  .sort()

const parse = (file: string) => parseReport(sourceFromFile(join(DIR, file)))

describe('our own runner outputs', () => {
  it.each(files)('%s', async (file) => {
    expect(summarize(await parse(file))).toMatchSnapshot()
  })

  it('Playwright JSON: flaky = two attempts, passed on retry; always failing = two failed attempts', async () => {
    const r = await parse('playwright-json/flaky-retry.json')
    const flaky = caseNamed(r, 'shop › flaky')
    expect(flaky).toMatchObject({ status: 'passed', flakyOnRetry: true, env: { project: 'chromium' } })
    expect(flaky.attempts.map((a) => a.status)).toEqual(['failed', 'passed'])
    expect(caseNamed(r, 'shop › always fails').attempts.map((a) => a.status)).toEqual(['failed', 'failed'])
  })

  it('Playwright JUnit: the same run, with the flaky test as a plain pass', async () => {
    const r = await parse('junit/playwright-flaky-retry.xml')
    expect(caseNamed(r, 'shop › flaky')).toMatchObject({ status: 'passed', flakyOnRetry: false })
    expect(caseNamed(r, 'shop › flaky').attempts).toHaveLength(1)
  })

  it('Jest JSON: a retried test (invocations: 2) passed on retry; jest-junit does not show it', async () => {
    const json = await parse('jest-json/jest-retry.json')
    expect(caseNamed(json, 'math › flaky')).toMatchObject({ status: 'passed', flakyOnRetry: true })
    const junit = await parse('junit/jest-junit-retry.xml')
    expect(caseNamed(junit, 'math › flaky')).toMatchObject({
      status: 'passed',
      flakyOnRetry: false,
      module: 'math.test.js',
    })
  })

  it('node:test JUnit: describe blocks are the module', async () => {
    const r = await parse('junit/node-test.xml')
    expect(caseNamed(r, 'deep').module).toBe('math › nested')
    expect(caseNamed(r, 'top level').module).toBe('')
  })
})
