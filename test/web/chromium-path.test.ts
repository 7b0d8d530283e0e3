import { mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ROOT } from '../helpers/run-cli.js'

/**
 * Issue 30, contributors: the Chromium the tests use is configurable (FLAKEWATCH_CHROMIUM), documented, and one
 * path for every test; a missing one is an error that says how to give another, never a silent skip.
 */

const load = async () => {
  vi.resetModules()
  return import('../helpers/chromium.js')
}

afterEach(() => {
  vi.unstubAllEnvs()
  vi.resetModules()
})

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.name === '.tmp' || e.name === 'fixtures'
      ? []
      : e.isDirectory()
        ? testFiles(join(dir, e.name))
        : /\.(ts|mts|mjs)$/.test(e.name)
          ? [join(dir, e.name)]
          : [],
  )
}

describe('the tests’ Chromium', () => {
  it('is named in one place: no other test file writes a browser path of its own', () => {
    const debians = ['', 'usr', 'bin', 'chromium'].join('/') // spelt so that this file does not name it
    const own = testFiles(join(ROOT, 'test'))
      .filter((f) => readFileSync(f, 'utf8').includes(debians))
      .map((f) => relative(ROOT, f))
    expect(own).toEqual(['test/helpers/chromium.ts'])
  })

  it('FLAKEWATCH_CHROMIUM picks another browser, and the docs say so', async () => {
    const { CHROMIUM_PATH: usual } = await load()
    const dir = mkdtempSync(join(tmpdir(), 'fw-chromium-'))
    const other = join(dir, 'my-chromium')
    symlinkSync(usual, other)
    vi.stubEnv('FLAKEWATCH_CHROMIUM', other)
    const { CHROMIUM_PATH, PLAYWRIGHT_LAUNCH_OPTIONS, launchChromium } = await load()
    expect(CHROMIUM_PATH).toBe(other)
    expect(PLAYWRIGHT_LAUNCH_OPTIONS).toContain(JSON.stringify(other))
    const browser = await launchChromium()
    try {
      expect(browser.version()).toMatch(/^\d+\./)
    } finally {
      await browser.close()
    }
    expect(readFileSync(join(ROOT, 'docs/development.md'), 'utf8')).toMatch(/`FLAKEWATCH_CHROMIUM=/)
  })

  it('a browser that is not there is an error naming the path and the variable', async () => {
    vi.stubEnv('FLAKEWATCH_CHROMIUM', '/nonexistent/chromium')
    const { launchChromium } = await load()
    expect(() => launchChromium()).toThrow(/no Chromium at \/nonexistent\/chromium: .*FLAKEWATCH_CHROMIUM/)
  })
})
