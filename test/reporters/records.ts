import type { RecordedCase } from '../../src/reporters/build-cases.js'
import type { PlaywrightAttempt, PlaywrightTestRecord } from '../../src/reporters/playwright-cases.js'
import type { VitestTestCase, VitestTestModule } from '../../src/reporters/vitest-cases.js'

/** Plain-data runner results for the builder tests: no runner objects, no mocks. */

export const startTime = new Date('2026-03-01T10:00:00Z')
export const run = { startTime, durationMs: 1500, status: 'complete' as const }

/** One attempt; a failing one carries an error naming its try. */
export function attempt(
  retry: number,
  status: PlaywrightAttempt['status'],
  extra: Partial<PlaywrightAttempt> = {},
): PlaywrightAttempt {
  const failed = status !== 'passed' && status !== 'skipped'
  const error = failed
    ? { message: `Error: try ${retry} failed`, stack: `Error: try ${retry} failed\n    at a.spec.ts:3:5` }
    : undefined
  return { retry, status, duration: 10 + retry, error, errors: error ? [error] : [], annotations: [], ...extra }
}

/** A test in `tests/cart.spec.ts`, describe `cart`, project `chromium`; its outcome follows from its attempts. */
export function pwRecord(
  title: string,
  attempts: PlaywrightAttempt[],
  extra: Partial<PlaywrightTestRecord> = {},
): PlaywrightTestRecord {
  const last = attempts.at(-1)?.status
  const outcome =
    !last || last === 'skipped'
      ? 'skipped'
      : last !== 'passed'
        ? 'unexpected'
        : attempts.length > 1
          ? 'flaky'
          : 'expected'
  return {
    project: 'chromium',
    file: 'tests/cart.spec.ts',
    describes: ['cart'],
    title,
    expectedStatus: 'passed',
    outcome,
    tags: [],
    annotations: [],
    attempts,
    ...extra,
  }
}

export const byName = (cases: RecordedCase[]) => new Map(cases.map((c) => [c.name, c]))

export interface VitestTestOptions {
  state?: 'passed' | 'failed' | 'skipped' | 'pending'
  retryCount?: number
  errors?: { message: string; name?: string; stack?: string }[]
  parent?: VitestTestCase['parent']
  project?: string
}

/** A Vitest test in describe `cart`, as the reported-task API shows it. */
export function vTest(name: string, over: VitestTestOptions = {}): VitestTestCase {
  return {
    type: 'test',
    name,
    parent: over.parent ?? { type: 'suite', name: 'cart', parent: { type: 'module' } },
    tags: ['db'],
    project: { name: over.project ?? '' },
    result: () => ({ state: over.state ?? 'passed', errors: over.errors }),
    diagnostic: () => ({ duration: 12.3456789, retryCount: over.retryCount ?? 0, flaky: false }),
    annotations: () => [{ type: 'note', message: 'hello' }],
  }
}

/** The module `src/cart.test.ts` holding `tests`. */
export const vModule = (tests: VitestTestCase[], errors: { message: string }[] = []): VitestTestModule => ({
  relativeModuleId: 'src/cart.test.ts',
  project: { name: '' },
  children: { allTests: () => tests },
  errors: () => errors,
})
