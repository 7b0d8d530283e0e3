import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { JsonItemIndenter } from '../../src/cli/indent-json.js'
import { jsonArrayItem } from '../../src/cli/output.js'

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8')

// Strings with what the indenter must copy or drop as a parse and JSON.stringify would: quotes, backslashes,
// escaped and raw control characters (C0, DEL, C1), non-ASCII text, pairs and lone halves of surrogates.
const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', '\\', '{', '}', '[', ']', ',', ':', ' ', '\n', '\t', '\u0000', '\u001b', '\u007f'),
    fc.constantFrom('\u0085', '\u009f', '\u00a0', 'é', '€', '\u2028', '😀', '\ud800', '\udfff'),
    fc.constant('a'),
  ),
})
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    tricky,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(tricky, tie('value'), { maxKeys: 4 }),
  ),
})).value

describe('JsonItemIndenter', () => {
  it('writes what jsonArrayItem writes for JSON.stringify’s text, as UTF-8, without parsing it', () => {
    const indenter = new JsonItemIndenter()
    fc.assert(
      fc.property(json, (value) => {
        const compact = JSON.stringify(value)
        expect(text(indenter.indent(compact))).toBe(jsonArrayItem(JSON.parse(compact)))
      }),
      { numRuns: 2000 },
    )
  })

  it('keeps empty objects and arrays on their line, and grows past its first buffer', () => {
    const indenter = new JsonItemIndenter()
    expect(text(indenter.indent('{"a":[],"b":{},"c":[{}]}'))).toBe(
      '  {\n    "a": [],\n    "b": {},\n    "c": [\n      {}\n    ]\n  }',
    )
    const big = { rows: Array.from({ length: 5000 }, (_, i) => ({ i, s: 'x'.repeat(i % 50) })) }
    expect(text(indenter.indent(JSON.stringify(big)))).toBe(jsonArrayItem(big))
    // The buffer is reused: a later, smaller item is whole and alone.
    expect(text(indenter.indent('{"a":1}'))).toBe('  {\n    "a": 1\n  }')
  })
})
