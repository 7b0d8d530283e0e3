/**
 * `jsonArrayItem(JSON.parse(text))` as UTF-8 bytes, made from the text without parsing it: for JSON that is stored
 * compact and printed indented (a persisted analysis, printed by `analyze --json`), where parsing every row and
 * writing it again was most of the command's time and garbage.
 *
 * `text` must be `JSON.stringify`'s own compact output, as every persisted analysis is: its numbers and escapes
 * are then what a parse and stringify would write again, and are copied as they are. The terminal's control
 * characters that `output.ts` strips are left out alike.
 */
export class JsonItemIndenter {
  #out: Uint8Array = new Uint8Array(1 << 16)

  /**
   * The item's bytes: a view of a buffer that the next call reuses.
   * @example new TextDecoder().decode(indenter.indent('{"a":[1,{}]}')) // '  {\n    "a": [\n      1,\n      {}\n    ]\n  }'
   */
  indent(text: string): Uint8Array {
    let out = this.#out
    let p = 0
    // An array's element: the item and every line of it indented one level.
    let depth = 1
    out[p++] = 0x20
    out[p++] = 0x20
    let inString = false
    const n = text.length
    for (let i = 0; i < n; i++) {
      // Room for the widest step: a newline and an indent, or one character's four bytes.
      if (p + 2 * depth + 8 > out.length) out = this.#grow(p, 2 * depth + 8)
      const c = text.charCodeAt(i)
      if (inString) {
        // Most of the text: printable ASCII inside strings.
        if (c >= 0x20 && c < 0x7f && c !== 0x22 && c !== 0x5c) {
          out[p++] = c
          continue
        }
        if (c === 0x5c) {
          // An escape's next unit is ASCII (`"`, `\`, `n`, `u`…): copied with it, it cannot end the string.
          out[p++] = c
          out[p++] = text.charCodeAt(++i)
          continue
        }
        if (c === 0x22) inString = false
      } else if (c === 0x22) {
        inString = true
      } else if (c === 0x7b || c === 0x5b) {
        out[p++] = c
        const next = text.charCodeAt(i + 1)
        // An empty object or array stays on its line, as JSON.stringify writes it.
        if (next === c + 2) {
          out[p++] = next
          i++
          continue
        }
        depth++
        p = newline(out, p, depth)
        continue
      } else if (c === 0x7d || c === 0x5d) {
        depth--
        p = newline(out, p, depth)
        out[p++] = c
        continue
      } else if (c === 0x2c) {
        out[p++] = c
        p = newline(out, p, depth)
        continue
      } else if (c === 0x3a) {
        out[p++] = c
        out[p++] = 0x20
        continue
      }
      p = utf8(text, i, c, out, p)
      // A surrogate pair is one character of four bytes.
      if (c >= 0xd800 && c <= 0xdbff && isLow(text.charCodeAt(i + 1))) i++
    }
    return out.subarray(0, p)
  }

  #grow(used: number, need: number): Uint8Array {
    const bigger = new Uint8Array(Math.max(this.#out.length * 2, used + need))
    bigger.set(this.#out.subarray(0, used))
    this.#out = bigger
    return bigger
  }
}

function newline(out: Uint8Array, p: number, depth: number): number {
  out[p++] = 0x0a
  for (let k = 0; k < 2 * depth; k++) out[p++] = 0x20
  return p
}

const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff

/**
 * Writes the character at `i` (first unit `c`) as UTF-8, or nothing for a control character that `output.ts`
 * strips (U+0000–U+0008, U+000B–U+001F, U+007F–U+009F). A lone surrogate becomes U+FFFD, as `Buffer.from` makes it.
 */
function utf8(text: string, i: number, c: number, out: Uint8Array, p: number): number {
  if (c < 0x80) {
    if ((c >= 0x20 && c !== 0x7f) || c === 0x09 || c === 0x0a) out[p++] = c
    return p
  }
  if (c < 0x800) {
    if (c <= 0x9f) return p
    out[p++] = 0xc0 | (c >> 6)
    out[p++] = 0x80 | (c & 0x3f)
    return p
  }
  if (c >= 0xd800 && c <= 0xdfff) {
    const low = text.charCodeAt(i + 1)
    if (c <= 0xdbff && isLow(low)) {
      const cp = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00)
      out[p++] = 0xf0 | (cp >> 18)
      out[p++] = 0x80 | ((cp >> 12) & 0x3f)
      out[p++] = 0x80 | ((cp >> 6) & 0x3f)
      out[p++] = 0x80 | (cp & 0x3f)
      return p
    }
    c = 0xfffd
  }
  out[p++] = 0xe0 | (c >> 12)
  out[p++] = 0x80 | ((c >> 6) & 0x3f)
  out[p++] = 0x80 | (c & 0x3f)
  return p
}
