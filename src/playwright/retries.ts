/**
 * `flakewatch/playwright/retries`: retry only the known flaky tests. Loads no `@playwright/test` code at runtime, so
 * that `playwright.config.ts` can import it.
 */
import { existsSync, readFileSync } from 'node:fs'
import type { Project } from '@playwright/test'
import { MATCH_NOTHING } from '../retry/test-patterns.js'

export interface RetryKnownFlakyOptions {
  /** Retries for the known flaky tests. The others get none. */
  retries: number
  /** The `--grep` pattern of the flaky tests, as `flakewatch list --format grep` prints it. */
  pattern?: string | RegExp
  /**
   * A file holding that pattern (`flakewatch list --flaky --quarantined --format grep -o <file>`). A missing file
   * means no known flaky test: nothing is retried.
   */
  file?: string
}

/** The projects other projects name as a dependency or a teardown: splitting those would break the names. */
function referencedNames(projects: readonly Project[]): Set<string> {
  const names = new Set<string>()
  for (const p of projects) {
    for (const d of p.dependencies ?? []) names.add(d)
    if (p.teardown) names.add(p.teardown)
  }
  return names
}

function resolvePattern(opts: RetryKnownFlakyOptions): RegExp | null {
  let source: string | RegExp | undefined = opts.pattern
  if (source === undefined && opts.file) source = existsSync(opts.file) ? readFileSync(opts.file, 'utf8').trim() : ''
  if (source === undefined || source === '' || source === MATCH_NOTHING) return null
  return typeof source === 'string' ? new RegExp(source) : source
}

const asList = (g: RegExp | RegExp[] | undefined): RegExp[] => (g === undefined ? [] : Array.isArray(g) ? g : [g])

/**
 * Splits each project in two with the same name: the known flaky tests with `retries`, every other test with
 * none. Both halves keep the project's name, so `--project`, reports and flakewatch's `project` facet stay as they
 * were, and the test ids do not change. Projects that others depend on are left whole (with their own retries).
 * @example
 * // playwright.config.ts (CI first runs: flakewatch list --flaky --quarantined --format grep -o .flakewatch/retry.grep)
 * import { retryKnownFlaky } from 'flakewatch/playwright/retries'
 * export default defineConfig({
 *   projects: retryKnownFlaky([{ name: 'chromium', use: devices['Desktop Chrome'] }], {
 *     retries: 2,
 *     file: '.flakewatch/retry.grep',
 *   }),
 * })
 */
export function retryKnownFlaky<P extends Project>(projects: readonly P[], opts: RetryKnownFlakyOptions): P[] {
  if (!Number.isInteger(opts.retries) || opts.retries < 0)
    throw new Error(`retryKnownFlaky: retries must be a whole number >= 0, got ${String(opts.retries)}`)
  const flaky = resolvePattern(opts)
  const keep = referencedNames(projects)
  const out: P[] = []
  for (const p of projects) {
    if (p.name !== undefined && keep.has(p.name)) {
      out.push(p)
      continue
    }
    const invert = asList(p.grepInvert)
    if (!flaky) {
      out.push({ ...p, retries: 0 })
      continue
    }
    // Playwright keeps a test when it matches `grep` and no `grepInvert`: the flaky half inverts "not flaky".
    const notFlaky = new RegExp(`^(?![\\s\\S]*(?:${flaky.source}))`, flaky.flags.replace(/[gy]/g, ''))
    out.push({ ...p, retries: 0, grepInvert: [...invert, flaky] })
    out.push({ ...p, retries: opts.retries, grepInvert: [...invert, notFlaky] })
  }
  return out
}
