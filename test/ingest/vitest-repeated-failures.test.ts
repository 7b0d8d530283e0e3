// Vitest's JUnit reporter writes one <failure> per try of a test that failed every retry; each is an attempt.
// Fixture: vitest 4 (this repository's node_modules), `it('always', { retry: 2 }, () => expect(++n).toBe(0))`,
// `vitest run --reporter=junit`, the temporary directory replaced by /project.
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseReport, sourceFromFile } from '../../src/ingest/index.js'
import { ROOT } from '../helpers/run-cli.js'

const FIXTURE = join(ROOT, 'test', 'fixtures', 'reports', 'junit', 'vitest-retry-all-failed.xml')

describe('JUnit: repeated <failure> elements', () => {
  it('become one failed attempt each, in order, with their own messages', async () => {
    const r = await parseReport(sourceFromFile(FIXTURE))
    expect(r.cases).toHaveLength(1)
    const c = r.cases[0]!
    expect(c).toMatchObject({ name: 'always', status: 'failed', flakyOnRetry: false })
    expect(c.attempts.map((a) => [a.retry, a.status, a.message])).toEqual([
      [0, 'failed', 'expected 1 to be +0 // Object.is equality'],
      [1, 'failed', 'expected 2 to be +0 // Object.is equality'],
      [2, 'failed', 'expected 3 to be +0 // Object.is equality'],
    ])
  })
})
