import { relative } from 'node:path'
import { BaseSequencer } from 'vitest/node'
import type { TestSpecification } from 'vitest/node'

/**
 * The files that took longest in CI, longest first. On a fresh clone Vitest knows no durations and starts the largest
 * files first, which put the Node 22 install (a small file) near the end, where it ran alone for minutes while the
 * other worker had nothing left. Started first, the long files overlap the many short ones and both workers finish
 * together. Where Vitest has durations of its own (a machine that ran the suite before), it already orders by them.
 */
export const LONGEST_FIRST = [
  'test/install/node22.test.ts',
  'test/e2e/cli-ingest-hostile.test.ts',
  'test/heal/healing.test.ts',
  'test/install/pack.test.ts',
  'test/heal/fixture.test.ts',
]

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (file: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(relative(file.project.config.root, file.moduleId).replaceAll('\\', '/'))
      return i < 0 ? LONGEST_FIRST.length : i
    }
    // Array sort is stable: the files not listed keep Vitest's own order after the listed ones.
    return sorted.sort((a, b) => rank(a) - rank(b))
  }
}
