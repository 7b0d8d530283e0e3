import { compileLinearRegex, escapeLinearRegex, linearRegexProblem, type LinearRegex } from './linear-regex.js'

/** Brace groups nested deeper than this are refused: `{a,{b,{c,…}}}` is never what a person writes. */
export const GLOB_MAX_BRACE_DEPTH = 8

/**
 * A glob as an RE2 pattern over the whole string. Globs are matched through RE2 like every user-supplied pattern:
 * a backtracking engine takes polynomial time in the number of stars (`*a*a*a*…b` against a long id).
 * - `*` matches within one `/`-separated part (at least one character when it is the whole part), `?` one
 *   character but `/`;
 * - `**` as a whole part matches across parts, none included: `a/**` matches `a` and `a/b/c`, `a/**\/b` matches
 *   `a/b`; elsewhere it is a `*`;
 * - `[abc]`, `[a-z]`, `[!a]` (or `[^a]`): one character of a class, never `/`;
 * - `{a,b}`: either alternative (nesting allowed);
 * - `\x`: `x` itself. Every other character, dots included, matches itself.
 * Throws an Error naming what is wrong with the glob.
 * @example globRegexSource('e2e::checkout/**') // 'e2e::checkout(?:/.*)?'
 */
export function globRegexSource(glob: string): string {
  const t = new GlobTranslator(glob)
  const out = t.sequence(0)
  if (t.pos < glob.length) throw new Error(`unexpected "${glob[t.pos]}" at ${t.pos + 1}`)
  return out
}

class GlobTranslator {
  pos = 0
  constructor(private readonly glob: string) {}

  /** Translates until the end, or (inside braces) until the `,` or `}` that ends this alternative. */
  sequence(depth: number): string {
    const g = this.glob
    let out = ''
    while (this.pos < g.length) {
      const ch = g[this.pos]!
      if (depth > 0 && (ch === ',' || ch === '}')) break
      if (ch === '\\' && this.pos + 1 < g.length) {
        out += escapeLinearRegex(g[this.pos + 1]!)
        this.pos += 2
      } else if (ch === '*') out += this.star(depth)
      else if (ch === '?') {
        out += '[^/]'
        this.pos++
      } else if (ch === '[') out += this.charClass()
      else if (ch === '{') out += this.braces(depth)
      else if (ch === '/' && this.isGlobstarPart(this.pos + 1, depth) && this.partEnds(this.pos + 3, depth)) {
        // `a/**` at the end: `a` itself, or anything below it.
        out += '(?:/.*)?'
        this.pos += 3
      } else {
        out += escapeLinearRegex(ch)
        this.pos++
      }
    }
    return out
  }

  private startsPart(i: number): boolean {
    const prev = this.glob[i - 1]
    return i === 0 || prev === '/' || prev === '{' || prev === ','
  }

  private partEnds(i: number, depth: number): boolean {
    const next = this.glob[i]
    return i >= this.glob.length || (depth > 0 && (next === ',' || next === '}'))
  }

  private isGlobstarPart(i: number, depth: number): boolean {
    const g = this.glob
    if (g[i] !== '*' || g[i + 1] !== '*' || !this.startsPart(i)) return false
    return this.partEnds(i + 2, depth) || g[i + 2] === '/'
  }

  private star(depth: number): string {
    const g = this.glob
    const i = this.pos
    if (this.isGlobstarPart(i, depth)) {
      if (g[i + 2] === '/') {
        this.pos += 3
        return '(?:.*/)?'
      }
      this.pos += 2
      return '.+'
    }
    let n = 0
    while (g[this.pos] === '*') {
      this.pos++
      n++
    }
    // A part that is only stars names something: `a/*` does not match `a/`.
    const wholePart = this.startsPart(i) && (this.partEnds(this.pos, depth) || g[this.pos] === '/')
    return n > 0 && wholePart ? '[^/]+' : '[^/]*'
  }

  private charClass(): string {
    const g = this.glob
    let i = this.pos + 1
    let negate = false
    if (g[i] === '!' || g[i] === '^') {
      negate = true
      i++
    }
    const start = i
    // A `]` right after the opening bracket is a member, as in every glob dialect.
    if (g[i] === ']') i++
    while (i < g.length && g[i] !== ']') i += g[i] === '\\' ? 2 : 1
    if (i >= g.length) {
      this.pos++
      return escapeLinearRegex('[')
    }
    let body = ''
    for (let j = start; j < i; j++) {
      const c = g[j]!
      if (c === '\\' && j + 1 < i) body += `\\${g[++j]!}`
      else if (c === '[' || c === ']' || c === '^' || c === '\\') body += `\\${c}`
      else body += c
    }
    this.pos = i + 1
    return negate ? `[^/${body}]` : `[${body}]`
  }

  private braces(depth: number): string {
    if (depth >= GLOB_MAX_BRACE_DEPTH) throw new Error(`braces nested deeper than ${GLOB_MAX_BRACE_DEPTH}`)
    const open = this.pos
    this.pos++
    const alternatives: string[] = []
    for (;;) {
      alternatives.push(this.sequence(depth + 1))
      const ch = this.glob[this.pos]
      if (ch === ',') this.pos++
      else if (ch === '}') {
        this.pos++
        break
      } else {
        // No closing brace: the `{` was a literal one.
        this.pos = open + 1
        return escapeLinearRegex('{')
      }
    }
    return alternatives.length === 1 ? `\\{${alternatives[0]!}\\}` : `(?:${alternatives.join('|')})`
  }
}

/** Why a glob cannot be used, or null. */
export function globProblem(glob: string): string | null {
  let source: string
  try {
    source = globRegexSource(glob)
  } catch (error) {
    return `not a valid glob: ${(error as Error).message}`
  }
  const problem = linearRegexProblem(source)
  return problem && `not a valid glob: ${problem}`
}

/**
 * A glob compiled to a matcher over whole strings, in linear time. Throws as {@link globRegexSource} does.
 * @example compileGlob('e2e::checkout/**').testExact('e2e::checkout/pay.spec.ts::pays') // true
 */
export function compileGlob(glob: string): LinearRegex {
  return compileLinearRegex(globRegexSource(glob), { dotAll: true })
}
