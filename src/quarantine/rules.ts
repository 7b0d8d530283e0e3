import picomatch from 'picomatch'
import safeRegex from 'safe-regex2'
import { z } from 'zod'
import { InputError } from '../errors.js'
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
 * A failure message is matched on its first this many characters only, so that even a regex that slipped past
 * the safety check runs over bounded input.
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

/** Why a pattern is refused, or null. One check for the CLI, the API and the file. */
export function regexProblem(pattern: string): string | null {
  if (pattern.length > RULE_REGEX_MAX_LENGTH) return `longer than ${RULE_REGEX_MAX_LENGTH} characters`
  try {
    new RegExp(pattern)
  } catch (error) {
    return `not a valid regular expression: ${(error as Error).message}`
  }
  // Nested quantifiers (`(a+)+`) backtrack exponentially on a near-miss: a failure message could hang the gate.
  if (!safeRegex(pattern)) return 'may backtrack catastrophically (nested or too many quantifiers)'
  return null
}

const safePattern = z
  .string()
  .min(1)
  .superRefine((p, ctx) => {
    const problem = regexProblem(p)
    if (problem) ctx.addIssue({ code: 'custom', message: problem })
  })
const glob = z.string().min(1).max(RULE_PATTERN_MAX_LENGTH)

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
  })
  .strict()
  .refine((m) => m.test_id ?? m.file ?? m.title ?? m.message, {
    // Branch and facets alone would forgive every failure on a runner: a rule must say which tests or failures.
    message: 'a rule needs test_id, file, title or message (branch and env only narrow it)',
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
}

/**
 * Compiles a rule's globs and regexes. Globs match `/` only where written (`**` crosses directories).
 * @example compileRule(rule).matches({ test, status: 'failed', message: 'Timeout 30000ms', branch: 'main', env })
 */
export function compileRule(rule: QuarantineRule): CompiledRule {
  const m = rule.match
  const checks: ((s: RuleSubject) => boolean)[] = []
  if (m.testId) {
    const g = picomatch(m.testId, { dot: true })
    checks.push((s) => g(s.test.testId))
  }
  if (m.file) {
    const g = picomatch(m.file, { dot: true })
    checks.push((s) => g(s.test.file ?? s.test.module))
  }
  if (m.title) {
    const re = new RegExp(m.title)
    checks.push((s) => re.test(s.test.name.slice(0, RULE_MESSAGE_MATCH_CHARS)))
  }
  if (m.message) {
    const re = new RegExp(m.message)
    checks.push((s) => s.message !== null && re.test(s.message.slice(0, RULE_MESSAGE_MATCH_CHARS)))
  }
  if (m.branch) {
    const g = picomatch(m.branch, { dot: true })
    checks.push((s) => s.branch !== null && g(s.branch))
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
