import type { AggregatedResult } from '@jest/reporters'
import type { Reporter as PlaywrightReporter } from '@playwright/test/reporter'
import type { Reporter as VitestReporter, TestModule } from 'vitest/node'
import { describe, expect, expectTypeOf, it, vi } from 'vitest'
import FlakewatchPlaywrightReporter from '../../src/playwright/reporter.js'
import type { JestAggregatedResult } from '../../src/reporters/jest-cases.js'
import FlakewatchJestReporter from '../../src/reporters/jest.js'
import type { VitestTestModule } from '../../src/reporters/vitest-cases.js'
import type FlakewatchVitestReporter from '../../src/reporters/vitest.js'

describe('the reporters against the runners’ own types', () => {
  it('fit the reporter interfaces, and read a subset of what the runners pass', () => {
    // The reporters declare the shapes they read instead of importing them; these checks (tsc) keep them honest.
    expectTypeOf<FlakewatchPlaywrightReporter>().toExtend<PlaywrightReporter>()
    expectTypeOf<FlakewatchVitestReporter>().toExtend<VitestReporter>()
    expectTypeOf<TestModule>().toExtend<VitestTestModule>()
    expectTypeOf<AggregatedResult>().toExtend<JestAggregatedResult>()
    expectTypeOf<FlakewatchJestReporter['onRunComplete']>().parameter(1).toEqualTypeOf<JestAggregatedResult>()
  })

  it('turn bad options into one stderr line and record nothing, without throwing', async () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    try {
      const reporter = new FlakewatchPlaywrightReporter({ db: 42 } as never)
      expect(reporter.printsToStdio()).toBe(false)
      await expect(reporter.onEnd({ status: 'failed', startTime: new Date(), duration: 1 })).resolves.toBeUndefined()
      const jest = new FlakewatchJestReporter({ rootDir: '/repo' }, { suite: '' })
      await expect(jest.onRunComplete(undefined, { startTime: 0, testResults: [] })).resolves.toBeUndefined()
      const lines = write.mock.calls.map(([s]) => String(s))
      const ignored = 'flakewatch: reporter options ignored, nothing will be recorded:'
      expect(lines).toEqual([
        `${ignored} db: Invalid input: expected string, received number\n`,
        `${ignored} suite: Too small: expected string to have >=1 characters\n`,
      ])
    } finally {
      write.mockRestore()
    }
  })
})
