import { z } from 'zod'
import { InputError } from '../errors.js'
import { compileGlob, globProblem } from '../glob.js'
import { compileLinearRegex, linearRegexProblem, type LinearRegex } from '../linear-regex.js'
import type { EnvFacets, ResultStatus, TestRef } from '../model.js'
import type { QuarantineRule, RuleMatch } from '../store/store.js'

export type { RuleMatch }

/** Longest regex a rule may carry: rules are typed by people, and a long pattern is a sign of a generated one. */
export const RULE_REGEX_MAX_LENGTH = 200
/** Longest glob, branch or facet value a rule may carry. */
export const RULE_PATTERN_MAX_LENGTH = 500
/** Environment facets one rule may require. */
export const RULE_MAX_FACETS = 10
/** Rules in one store or file: each is tried against every failure. */
export const MAX_RULES = 500
/**
 * A failure message is matched on its first this many characters only: matching is linear in the input (RE2), and
 * this bounds the input too.
 */
export const RULE_MESSAGE_MATCH_CHARS = 4096

/** `timeouts-arm64`: a name people can type, read in a log and grep for. */
export const RULE_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/

/** One result as a rule sees it: the test, how it ended, and the run it ran in. */
export interface RuleSubject {
  test: Pick<TestRef, 'testId' | 'name' | 'module' | 'file'>
  status: ResultStatus
  message: string | null
  branch: string | null
  env: EnvFacets
}

/**
 * Why a regex is refused, or null. One check for the CLI, the API and the file. Rules are matched by RE2, in time
 * linear in the message whatever the pattern, so only what RE2 cannot compile is refused (lookaround,
 * backreferences), with RE2's reason.
 */
export function regexProblem(pattern: string): string | null {
  if (pattern.length > RULE_REGEX_MAX_LENGTH) return `longer than ${RULE_REGEX_MAX_LENGTH} characters`
  return linearRegexProblem(pattern)
}

const safePattern = z
  .string()
  .min(1)
  .superRefine((p, ctx) => {
    const problem = regexProblem(p)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })
const glob = z
  .string()
  .min(1)
  .max(RULE_PATTERN_MAX_LENGTH)
  .superRefine((p, ctx) => {
    const problem = globProblem(p)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })

/**
 * Values a matcher is tried on to tell whether it selects everything: ids, paths, names and messages of every
 * shape flakewatch stores. A matcher that selects all of them selects any test or failure in practice (`**`, `.*`,
 * `.`, `{*,**}`, `[^x]|x`); one that misses any of them is narrow enough to say which tests or failures it means.
 */
const BROAD_PROBES = [
  'a',
  'Z',
  '0',
  '_',
  '-',
  '.',
  '!',
  ' ',
  'é',
  '✓',
  'x/y',
  '.hidden/a b',
  'unit::src/cart.test.ts::adds an item',
  'e2e::checkout/pay.spec.ts::checkout › pays @slow',
  'Error: expected 1 to be 2\n    at Object.<anonymous> (src/a.test.ts:3:5)',
  'AssertionError [ERR_ASSERTION]: false == true',
]

/** The matchers that say which tests or failures a rule means; branch and env only narrow them. */
const SELECTING = ['test_id', 'file', 'title', 'message'] as const

/** Whether one matcher selects every probe: a glob over the whole value, a regex anywhere in it. */
function selectsEverything(field: (typeof SELECTING)[number], pattern: string): boolean {
  try {
    const isGlob = field === 'test_id' || field === 'file'
    const m = isGlob ? compileGlob(pattern) : compileLinearRegex(pattern)
    return BROAD_PROBES.every((p) => (isGlob ? m.testExact(p) : m.test(p)))
  } catch {
    return false // refused for its syntax, with its own reason
  }
}

/**
 * Why a rule would forgive every failure (in its branch and facets), or null: no matcher that selects tests or
 * failures, or only ones that select everything. Such a rule turns the gate off, so it needs `allow_broad`
 * (`--allow-broad`), which is kept with the rule and in its audit entry.
 * @example broadMatchProblem({ test_id: '**' }) // 'matches every failure: test_id "**" selects any value; …'
 */
export function broadMatchProblem(m: Partial<Record<(typeof SELECTING)[number], string>>): string | null {
  const present = SELECTING.filter((f) => m[f] !== undefined)
  const allow = 'pass --allow-broad (allow_broad: true in the match) if it is meant to'
  if (present.length === 0) {
    return `a rule needs test_id, file, title or message (branch and env only narrow it); without one it forgives every failure: ${allow}`
  }
  if (present.every((f) => selectsEverything(f, m[f]!))) {
    const what = present.map((f) => `${f} "${m[f]!.slice(0, 80)}"`).join(' and ')
    return `matches every failure: ${what} selects any value; ${allow}`
  }
  return null
}

/** The matchers of a rule, as written in the quarantine file and in API bodies (snake_case keys). */
export const RuleMatchSchema = z
  .object({
    test_id: glob.optional(),
    file: glob.optional(),
    title: safePattern.optional(),
    message: safePattern.optional(),
    branch: glob.optional(),
    env: z
      .record(z.string().min(1).max(100), z.string().min(1).max(RULE_PATTERN_MAX_LENGTH))
      .refine((e) => Object.keys(e).length <= RULE_MAX_FACETS, `at most ${RULE_MAX_FACETS} facets`)
      .optional(),
    /** The rule is meant to forgive every failure its branch and facets select (see {@link broadMatchProblem}). */
    allow_broad: z.literal(true).optional(),
  })
  .strict()
  .superRefine((m, ctx) => {
    // A rule that selects everything would turn the gate off: refused on every path (API, CLI, file) unless asked for.
    const problem = m.allow_broad ? null : broadMatchProblem(m)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })

export type RuleMatchJson = z.infer<typeof RuleMatchSchema>

export function ruleMatchFromJson(m: RuleMatchJson): RuleMatch {
  const out: RuleMatch = {}
  if (m.test_id !== undefined) out.testId = m.test_id
  if (m.file !== undefined) out.file = m.file
  if (m.title !== undefined) out.title = m.title
  if (m.message !== undefined) out.message = m.message
  if (m.branch !== undefined) out.branch = m.branch
  if (m.env !== undefined) out.env = m.env
  if (m.allow_broad) out.allowBroad = true
  return out
}

export function ruleMatchToJson(m: RuleMatch): RuleMatchJson {
  return {
    test_id: m.testId,
    file: m.file,
    title: m.title,
    message: m.message,
    branch: m.branch,
    env: m.env,
    allow_broad: m.allowBroad,
  }
}

/**
 * Checks a rule's matchers, throwing an InputError that names the field (exit 2, or a 400 from the API).
 * @example validateRuleMatch({ message: 'Timeout \\d+ms exceeded', env: { runner: 'arm64' } })
 */
export function validateRuleMatch(match: RuleMatch, where = 'rule'): RuleMatch {
  const parsed = RuleMatchSchema.safeParse(ruleMatchToJson(match))
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'match'}: ${i.message}`)
    throw new InputError(`${where}: ${issues.join('; ')}`)
  }
  return ruleMatchFromJson(parsed.data)
}

/** A rule compiled once per gate, so that each result costs a few function calls. */
export interface CompiledRule {
  rule: QuarantineRule
  matches(subject: RuleSubject): boolean
  /**
   * Why the rule forgives nothing, when a pattern stored before RE2 matched the rules no longer compiles (a
   * lookahead, say). Such a rule fails safe: the failures it covered block again, and the gate says why.
   */
  problem?: string
}

/** Compiles one matcher, or says which field could not be compiled. */
function compiled<T>(field: string, pattern: string, compile: (p: string) => T): T | string {
  try {
    return compile(pattern)
  } catch (error) {
    return `${field}: ${(error as Error).message}`
  }
}

/**
 * Compiles a rule's globs and regexes, all matched by RE2 in linear time. Globs match `/` only where written (`**`
 * crosses directories; see `src/glob.ts`).
 * @example compileRule(rule).matches({ test, status: 'failed', message: 'Timeout 30000ms', branch: 'main', env })
 */
export function compileRule(rule: QuarantineRule): CompiledRule {
  const m = rule.match
  const checks: ((s: RuleSubject) => boolean)[] = []
  const problems: string[] = []
  const glob = (field: string, pattern: string, subject: (s: RuleSubject) => string | null) => {
    const g = compiled(field, pattern, compileGlob)
    if (typeof g === 'string') problems.push(g)
    else
      checks.push((s) => {
        const value = subject(s)
        return value !== null && g.testExact(value)
      })
  }
  const regex = (field: string, pattern: string, subject: (s: RuleSubject) => string | null) => {
    const re = compiled<LinearRegex>(field, pattern, (p) => compileLinearRegex(p))
    if (typeof re === 'string') problems.push(re)
    else
      checks.push((s) => {
        const value = subject(s)
        return value !== null && re.test(value.slice(0, RULE_MESSAGE_MATCH_CHARS))
      })
  }
  if (m.testId) glob('test_id', m.testId, (s) => s.test.testId)
  if (m.file) glob('file', m.file, (s) => s.test.file ?? s.test.module)
  if (m.title) regex('title', m.title, (s) => s.test.name)
  if (m.message) regex('message', m.message, (s) => s.message)
  if (m.branch) glob('branch', m.branch, (s) => s.branch)
  // A broad rule stored before broad rules needed allow_broad would turn the gate off: it fails safe instead.
  const broad = m.allowBroad ? null : broadMatchProblem(ruleMatchToJson(m))
  if (broad) problems.push(broad)
  if (problems.length) {
    return { rule, matches: () => false, problem: `rule ${rule.id} forgives nothing: ${problems.join('; ')}` }
  }
  if (m.env) {
    const wanted = Object.entries(m.env)
    checks.push((s) => wanted.every(([k, v]) => s.env[k] === v))
  }
  return { rule, matches: (s) => checks.every((c) => c(s)) }
}

/** A rule still in force at `now`. */
export function isRuleActive(rule: QuarantineRule, now: number): boolean {
  return !rule.expiresAt || Date.parse(rule.expiresAt) > now
}

/**
 * The rules in force, compiled, in id order so that the same failure always names the same rule.
 * @example const rules = compileRules(await store.listQuarantineRules(), Date.now())
 */
export function compileRules(rules: readonly QuarantineRule[], now: number): CompiledRule[] {
  return rules
    .filter((r) => isRuleActive(r, now))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(compileRule)
}

/** The first rule that forgives this result, or undefined. */
export function findRule(rules: readonly CompiledRule[], subject: RuleSubject): QuarantineRule | undefined {
  for (const r of rules) if (r.matches(subject)) return r.rule
  return undefined
}

/** Checks a rule id, throwing an InputError that says what is allowed. */
export function validateRuleId(id: string): string {
  if (!RULE_ID_PATTERN.test(id)) {
    throw new InputError(`rule id "${id.slice(0, 80)}": use 1-64 lowercase letters, digits, ".", "_" or "-"`)
  }
  return id
}

/** One line describing what a rule matches, for tables and logs. */
export function describeRuleMatch(m: RuleMatch): string {
  const parts: string[] = []
  if (m.testId) parts.push(`test_id ${m.testId}`)
  if (m.file) parts.push(`file ${m.file}`)
  if (m.title) parts.push(`title /${m.title}/`)
  if (m.message) parts.push(`message /${m.message}/`)
  if (m.branch) parts.push(`branch ${m.branch}`)
  if (m.env) for (const [k, v] of Object.entries(m.env)) parts.push(`${k}=${v}`)
  if (m.allowBroad) parts.push('broad')
  return parts.join(', ')
}

/** A rule as JSON (snake_case keys), as the API lists it and webhooks send it. */
export function ruleFieldsJson(r: QuarantineRule) {
  return {
    id: r.id,
    match: ruleMatchToJson(r.match),
    matches: describeRuleMatch(r.match),
    reason: r.reason,
    owner: r.owner,
    issue_url: r.issueUrl,
    created_at: r.createdAt,
    created_by: r.createdBy,
    expires_at: r.expiresAt,
  }
}
