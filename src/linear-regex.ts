import { RE2JS } from 're2js'

/**
 * A regular expression that runs in time linear in its input, whatever the pattern. Every pattern a user, a
 * repository file or an API body supplies is matched through this, never through `RegExp`: a backtracking engine
 * takes exponential time on a pattern like `(\w|\d)+$` against `111…1!`, and no syntactic check catches them all.
 * RE2 (here its pure JavaScript port) has no backtracking, and so no lookaround and no backreferences.
 */
export interface LinearRegex {
  readonly source: string
  /** Whether the pattern matches anywhere in `text`, as `RegExp.prototype.test` does. */
  test(text: string): boolean
  /** Whether the pattern matches the whole of `text`. */
  testExact(text: string): boolean
}

export interface LinearRegexOptions {
  /** `.` matches a newline too (RE2's `s` flag). */
  dotAll?: boolean
}

/**
 * Compiles a pattern in RE2 syntax. Throws an Error whose message says why RE2 refuses it (see {@link linearRegexProblem}).
 * @example compileLinearRegex('Timeout \\d+ms').test('Error: Timeout 30000ms exceeded') // true
 */
export function compileLinearRegex(pattern: string, opts: LinearRegexOptions = {}): LinearRegex {
  const re = RE2JS.compile(pattern, opts.dotAll ? RE2JS.DOTALL : 0)
  return {
    source: pattern,
    test: (text) => re.test(text),
    testExact: (text) => re.testExact(text),
  }
}

/**
 * Why RE2 cannot compile a pattern, or null. Lookaround (`(?=…)`, `(?!…)`) and backreferences (`\1`) are the usual
 * reasons: they are what makes a regex engine backtrack.
 * @example linearRegexProblem('(?!x)a') // 'not a pattern flakewatch can match in linear time (RE2 syntax): …'
 */
export function linearRegexProblem(pattern: string): string | null {
  try {
    RE2JS.compile(pattern)
    return null
  } catch (error) {
    const detail = (error as Error).message.replace(/^error parsing regexp: /, '')
    return `not a pattern flakewatch can match in linear time (RE2 syntax: no lookaround, no backreferences): ${detail}`
  }
}

/**
 * Escapes every character that has a meaning in RE2, so that `text` matches literally.
 * @example escapeLinearRegex('a.b*') // 'a\\.b\\*'
 */
export function escapeLinearRegex(text: string): string {
  return RE2JS.quote(text)
}
