import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FORMATS, parseReport } from '../../src/ingest/index.js'
import { parserSurfaces } from './surfaces/reports.js'
import { BENCH_OUT, countingSource, fuzzParams, realSeeds, runSurface, FUZZ_TIMEOUT } from './support.js'

/**
 * Every report format, fed its real fixtures mutated the ways files go wrong (cut short, bytes flipped, counts
 * made huge, nesting made deep, entity tricks, BOMs, CRLF): each parse ends in a report within the limits or in
 * the documented error naming the file, reads its input a bounded number of times, holds a heap bounded by its
 * size, keeps nothing once done; and valid reports read the same however they are chunked.
 */

const seeds = realSeeds()

describe.each(FORMATS)('%s', (format) => {
  const list = seeds.get(format) ?? []
  const surface = parserSurfaces.find((s) => s.name === `report-${format}`)!

  it('has real reports to start from', () => {
    expect(list.length).toBeGreaterThan(0)
  })

  it(
    'a mutated real report is read within the limits or refused with the file named, within its memory bound',
    { timeout: FUZZ_TIMEOUT },
    () => runSurface(surface),
  )

  // Not an input surface (the reports are valid and fixed): left out of bench/fuzz.mjs.
  it.skipIf(BENCH_OUT)(
    'a real report reads the same in any chunking and behind a byte-order mark',
    { timeout: FUZZ_TIMEOUT },
    async () => {
      const reference = await Promise.all(list.map((s) => parseReport(countingSource(s.path, s.bytes))))
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: list.length - 1 }),
          fc.integer({ min: 1, max: 4096 }),
          fc.boolean(),
          async (i, chunk, bom) => {
            const seed = list[i]!
            const bytes = bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), seed.bytes]) : seed.bytes
            const again = await parseReport(countingSource(seed.path, bytes, chunk))
            expect(again).toEqual(reference[i])
          },
        ),
        fuzzParams(50),
      )
    },
  )
})
