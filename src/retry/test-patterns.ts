import type { TestRef } from '../model.js'

/** Title separators the parsers and reporters put between describe blocks and the test title. */
const TITLE_SEPARATOR = / › | > /

/** Matches no title at all: what an empty selection must select (an empty pattern would select every test). */
export const MATCH_NOTHING = '(?!)'

/**
 * Escapes every character that has a meaning in a regular expression, so that a test title matches literally.
 * @example escapeRegex('adds (1+1)') // 'adds \\(1\\+1\\)'
 */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
}

/** The describe blocks and the title of a test, in order, from the stored name. */
export function titleParts(test: Pick<TestRef, 'name'>): string[] {
  return test.name.split(TITLE_SEPARATOR).filter((p) => p.length > 0)
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1)

/**
 * One test as Playwright's `--grep` sees it. Playwright matches against
 * `<project> <file relative to the project's testDir> <describe…> <title> <@tags…>`, joined with spaces, with
 * describe tags right after their describe. Only tags may follow the title. The file is matched by its base name (the project's testDir may be
 * deeper than the root the test id is relative to), and tags between titles are allowed.
 */
export function playwrightTestPattern(test: Pick<TestRef, 'module' | 'name'>): string {
  const tags = '(?: @\\S+)*'
  const parts = [escapeRegex(baseName(test.module)), ...titleParts(test).map(escapeRegex)]
  return `(?:^|[ /])${parts.join(`${tags} `)}${tags}$`
}

/**
 * The `--grep` pattern for Playwright that selects exactly these tests (and a test of the same name in a file of
 * the same base name). An empty list gives a pattern that matches nothing.
 * @example playwrightGrep([{ module: 'e2e/cart.spec.ts', name: 'cart › adds' }])
 */
export function playwrightGrep(tests: readonly Pick<TestRef, 'module' | 'name'>[]): string {
  if (!tests.length) return MATCH_NOTHING
  return unique(tests.map(playwrightTestPattern)).join('|')
}

/**
 * The test-name pattern for Vitest (`-t`) and Jest (`-t`, `--testNamePattern`): both match the describe titles
 * and the test title joined with spaces. The start is anchored at a word so that `adds` does not select `re-adds`;
 * Vitest prefixes nothing, Jest nothing either, but a runner that prefixes the file still matches.
 * @example testNamePattern([{ name: 'cart > adds' }]) // '(?:^| )cart adds$'
 */
export function testNamePattern(tests: readonly Pick<TestRef, 'name'>[]): string {
  if (!tests.length) return MATCH_NOTHING
  // A literal " > " inside a title reads the same as a separator: accept either spelling.
  const sep = '(?: | > | › )'
  return unique(tests.map((t) => `(?:^| )${titleParts(t).map(escapeRegex).join(sep)}$`)).join('|')
}

function unique(items: string[]): string[] {
  return [...new Set(items)]
}
