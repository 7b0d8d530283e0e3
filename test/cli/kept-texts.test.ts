import { existsSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { KeptTexts } from '../../src/cli/kept-texts.js'

const spillDirs = () => readdirSync(tmpdir()).filter((d) => d.startsWith('flakewatch-kept-'))

describe('KeptTexts', () => {
  it('gives back every text, as text and as UTF-8, in any order, in memory and past it in a file', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ maxLength: 3000 })), {
          maxLength: 60,
        }),
        fc.integer({ min: 0, max: 4000 }),
        fc.integer({ min: 1, max: 700 }),
        fc.boolean(),
        (texts, memoryBytes, blockBytes, asBytes) => {
          const kept = new KeptTexts(memoryBytes, blockBytes)
          try {
            const ids = texts.map((t) => (asBytes ? kept.addBytes(Buffer.from(t)) : kept.add(t)))
            expect(ids).toEqual(texts.map((_, i) => i))
            for (let i = texts.length - 1; i >= 0; i--) {
              expect(kept.text(i)).toBe(Buffer.from(texts[i]!).toString())
              expect(Buffer.from(kept.bytes(i)).equals(Buffer.from(texts[i]!))).toBe(true)
            }
          } finally {
            kept.close()
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('moves to a temporary file past its memory, and removes it on close', () => {
    const before = new Set(spillDirs())
    const kept = new KeptTexts(1000, 256)
    const texts = Array.from({ length: 40 }, (_, i) => `{"n":${i},"s":"${'é'.repeat(i * 3)}"}`)
    texts.forEach((t) => kept.add(t))
    const made = spillDirs().filter((d) => !before.has(d))
    expect(made).toHaveLength(1)
    // Texts added after the reads began still come back.
    expect(kept.text(3)).toBe(texts[3])
    expect(kept.text(kept.add('late'))).toBe('late')
    expect(kept.text(39)).toBe(texts[39])
    kept.close()
    expect(existsSync(`${tmpdir()}/${made[0]}`)).toBe(false)
  })

  it('holds texts that fit in memory without a file', () => {
    const before = spillDirs().length
    const kept = new KeptTexts()
    for (let i = 0; i < 1000; i++) kept.add(`text ${i}`)
    expect(spillDirs().length).toBe(before)
    expect(kept.text(999)).toBe('text 999')
    kept.close()
  })
})
