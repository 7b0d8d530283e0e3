import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseReport, sourceFromBuffer } from '../../src/ingest/index.js'
import { fuzzParams, FUZZ_TIMEOUT } from './support.js'

/**
 * Valid reports written from arbitrary cases read back as exactly those cases: names with any printable character
 * (XML and JSON escaping, non-ASCII, astral characters), every status, durations and messages.
 */

/**
 * A name a runner could write: printable, no surrounding whitespace (runners trim, and so does flakewatch). Not
 * U+FFFD: the binary-file check cannot tell a literal replacement character near the top of a report from invalid
 * UTF-8, and refuses both (docs/ingest.md, "Bad input").
 */
const name = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
  .map((s) => s.replace(/[\p{Cc}\p{Cs}\uFFFD\uFFFE\uFFFF]/gu, '').trim())
  .filter((s) => s.length > 0)

const testCase = fc.record({
  module: name,
  name,
  status: fc.constantFrom('passed', 'failed', 'skipped'),
  ms: fc.integer({ min: 0, max: 3_600_000 }),
  message: name,
})

const xml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')

describe('valid reports round-trip', () => {
  it('JUnit XML written from arbitrary cases reads back as them', { timeout: FUZZ_TIMEOUT }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(testCase, { maxLength: 20, selector: (c) => `${c.module}\u0000${c.name}` }),
        async (cases) => {
          const body = cases
            .map((c) => {
              const inner =
                c.status === 'failed'
                  ? `<failure message="${xml(c.message)}">${xml(c.message)}</failure>`
                  : c.status === 'skipped'
                    ? '<skipped/>'
                    : ''
              return `<testcase classname="${xml(c.module)}" name="${xml(c.name)}" time="${(c.ms / 1000).toFixed(3)}">${inner}</testcase>`
            })
            .join('\n')
          const text = `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="s" tests="${cases.length}">\n${body}\n</testsuite>\n`
          const report = await parseReport(sourceFromBuffer('gen.xml', text))
          expect(report.format).toBe('junit')
          const read = report.cases.map((c) => ({
            module: c.module,
            name: c.name,
            status: c.status,
            ms: c.durationMs,
            message: c.status === 'failed' ? c.message : null,
          }))
          const want = cases.map((c) => ({ ...c, message: c.status === 'failed' ? c.message : null }))
          expect(read).toEqual(want)
        },
      ),
      fuzzParams(150),
    )
  })

  it('the simple CI JSON written from arbitrary results reads back as them', { timeout: FUZZ_TIMEOUT }, async () => {
    const key = fc
      .tuple(
        name,
        name.filter((n) => !n.includes('/')),
      )
      .map(([m, n]) => `${m}/${n}`)
    await fc.assert(
      fc.asyncProperty(fc.dictionary(key, fc.boolean(), { maxKeys: 20 }), async (tests) => {
        const text = JSON.stringify({ metadata: { ref: 'main', pipeline_id: 7 }, tests })
        const report = await parseReport(sourceFromBuffer('gen.json', text), { format: 'simple-json' })
        const read = Object.fromEntries(report.cases.map((c) => [`${c.module}/${c.name}`, c.status === 'passed']))
        expect(read).toEqual(tests)
      }),
      fuzzParams(150),
    )
  })
})
