import { InputError } from '../errors.js'
import { compileLinearRegex, type LinearRegex } from '../linear-regex.js'

/** GitHub refuses CODEOWNERS files of 3 MB and more; so does flakewatch. */
export const CODEOWNERS_MAX_BYTES = 3 * 1024 * 1024

/**
 * `github`: gitignore-like patterns, a slash inside a pattern anchors it at the root, no sections, no negation.
 * `gitlab`: `File.fnmatch` patterns that match anywhere unless they start with `/`, `[Section]` headers with default
 * owners, and `!pattern` exclusions.
 */
export type CodeownersDialect = 'github' | 'gitlab'

export interface CodeownersRule {
  pattern: string
  /** The line's owners, or its section header's default owners when the line names none. */
  owners: string[]
  /** GitLab `!pattern`: matching files have no owner in this section. */
  exclude: boolean
  line: number
  /** Matched by RE2: a CODEOWNERS file comes from the repository, and `*a*a*a…` must not stall a lookup. */
  regex: LinearRegex
}

export interface CodeownersSection {
  /** `null` for the rules before the first section header. */
  name: string | null
  optional: boolean
  defaultOwners: string[]
  rules: CodeownersRule[]
}

export interface Codeowners {
  dialect: CodeownersDialect
  sections: CodeownersSection[]
  /** Lines that were skipped, with why: a bad line never hides every other rule. */
  warnings: string[]
}

/** Splits on whitespace that is not escaped with a backslash (`path\ with\ spaces/`). */
function tokens(line: string): string[] {
  const out: string[] = []
  let cur = ''
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    if (ch === '\\' && i + 1 < line.length) {
      cur += ch + line[++i]!
    } else if (ch === ' ' || ch === '\t') {
      if (cur) out.push(cur)
      cur = ''
    } else cur += ch
  }
  if (cur) out.push(cur)
  return out
}

/** Drops a `#` comment that is not escaped. */
function stripComment(line: string): string {
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\\') i++
    else if (line[i] === '#') return line.slice(0, i)
  }
  return line
}

const SECTION = /^(\^)?\[([^\]]+)\](?:\[(\d+)\])?(.*)$/

function globToRegex(glob: string): string {
  let out = ''
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!
    if (ch === '\\' && i + 1 < glob.length) {
      out += glob[++i]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
    } else if (ch === '*' && glob[i + 1] === '*') {
      const slashAfter = glob[i + 2] === '/'
      out += slashAfter ? '(?:.*/)?' : '.*'
      i += slashAfter ? 2 : 1
    } else if (ch === '*') out += '[^/]*'
    else if (ch === '?') out += '[^/]'
    else out += ch.replace(/[.+^${}()|[\]\\/]/g, '\\$&')
  }
  return out
}

/**
 * A CODEOWNERS pattern as a regular expression over repository-relative paths (no leading slash), matched in
 * linear time.
 */
export function patternRegex(pattern: string, dialect: CodeownersDialect): LinearRegex {
  return compileLinearRegex(patternRegexSource(pattern, dialect), { dotAll: true })
}

function patternRegexSource(pattern: string, dialect: CodeownersDialect): string {
  let p = pattern
  const dirOnly = p.endsWith('/')
  if (dirOnly) p = p.replace(/\/+$/, '')
  let anchored = p.startsWith('/')
  if (anchored) p = p.replace(/^\/+/, '')
  // gitignore (GitHub): a slash at the start or in the middle makes the pattern relative to the root.
  if (dialect === 'github' && p.includes('/') && !p.startsWith('**/')) anchored = true
  if (p === '' || p === '**') return '^'
  const prefix = anchored ? '^' : '^(?:.*/)?'
  const body = globToRegex(p)
  // `docs/*` owns the files right in docs/, not deeper (both GitHub's and GitLab's docs say so); a name without a
  // wildcard in its last part may be a directory, and then owns everything under it.
  const lastPart = p.slice(p.lastIndexOf('/') + 1)
  const end = dirOnly ? '/' : lastPart.includes('*') ? '$' : '(?:/|$)'
  return `${prefix}${body}${end}`
}

/**
 * Parses a CODEOWNERS file. Bad lines become warnings (GitHub also skips them), never an error.
 * @example parseCodeowners('*.ts @web\n/docs/ @docs', 'github').sections[0].rules.length // 2
 */
export function parseCodeowners(text: string, dialect: CodeownersDialect, file = 'CODEOWNERS'): Codeowners {
  if (Buffer.byteLength(text) >= CODEOWNERS_MAX_BYTES)
    throw new InputError(
      `${file}: CODEOWNERS is ${Buffer.byteLength(text)} bytes; the limit is ${CODEOWNERS_MAX_BYTES}`,
    )
  const unnamed: CodeownersSection = { name: null, optional: false, defaultOwners: [], rules: [] }
  const sections: CodeownersSection[] = [unnamed]
  const byName = new Map<string, CodeownersSection>()
  const warnings: string[] = []
  let current = unnamed
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const raw = stripComment(lines[i]!).trim()
    if (!raw) continue
    const lineNo = i + 1
    if (dialect === 'gitlab') {
      const section = SECTION.exec(raw)
      if (section) {
        const name = section[2]!.trim()
        const key = name.toLowerCase()
        // GitLab merges sections that share a name, case-insensitively.
        let s = byName.get(key)
        if (!s) {
          s = { name, optional: Boolean(section[1]), defaultOwners: [], rules: [] }
          byName.set(key, s)
          sections.push(s)
        }
        // Default owners belong to the header they are written on: a later header of the same name has its own.
        s.defaultOwners = tokens(section[4] ?? '')
        current = s
        continue
      }
    }
    const [first, ...owners] = tokens(raw)
    let pattern = first!
    const exclude = pattern.startsWith('!')
    if (exclude) {
      if (dialect === 'github') {
        warnings.push(`${file}:${lineNo}: GitHub does not support negation (!); line skipped`)
        continue
      }
      pattern = pattern.slice(1)
    }
    if (dialect === 'github' && /^\\#/.test(pattern)) {
      // GitHub does not honour the escape: the line is a comment there.
      continue
    }
    try {
      const resolved = owners.length || exclude ? owners : current.defaultOwners
      current.rules.push({ pattern, owners: resolved, exclude, line: lineNo, regex: patternRegex(pattern, dialect) })
    } catch {
      warnings.push(`${file}:${lineNo}: cannot read pattern "${pattern}"; line skipped`)
    }
  }
  return { dialect, sections: sections.filter((s) => s.rules.length || s.name === null), warnings }
}

/**
 * The owners of one repository-relative path. GitHub: the last matching line wins (a line without owners makes the
 * path unowned). GitLab: each section contributes its last matching line (or the section's default owners when that
 * line names none), unless an exclusion in the section matches; the sections' owners are joined.
 * @example ownersOf(parseCodeowners('* @all\n*.ts @web', 'github'), 'src/a.ts') // ['@web']
 */
export function ownersOf(codeowners: Codeowners, path: string): string[] {
  const p = path.replace(/^\.\//, '').replace(/^\/+/, '')
  const out: string[] = []
  for (const section of codeowners.sections) {
    let last: CodeownersRule | undefined
    let excluded = false
    for (const rule of section.rules) {
      if (!rule.regex.test(p)) continue
      if (rule.exclude) excluded = true
      else last = rule
    }
    if (excluded || !last) continue
    for (const o of last.owners) if (!out.includes(o)) out.push(o)
    if (codeowners.dialect === 'github') break
  }
  return out
}
