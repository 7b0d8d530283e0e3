import type { TestAnalysis } from '../../analysis/types.js'
import type { ResolvedConfig } from '../../config/load.js'
import { InputError } from '../../errors.js'
import { importQuarantineFile, readQuarantineFile, writeQuarantineFile } from '../../quarantine/file.js'
import { createQuarantineManager, type AutoUpdateResult } from '../../quarantine/manager.js'
import type { PolicyTest } from '../../quarantine/policy.js'
import { RULE_COVERAGE_DAYS, ruleCoverage, type RuleCoverage } from '../../quarantine/rule-coverage.js'
import { describeRuleMatch, ruleMatchToJson, type RuleMatch } from '../../quarantine/rules.js'
import { validateExpiry } from '../../quarantine/validate.js'
import type { QuarantineRecord, QuarantineRule, Store } from '../../store/store.js'
import { ownerLookupFromConfig } from '../../owners/read-codeowners.js'
import { findTest } from '../../pipeline/find-test.js'
import { emitJson, renderTable, type Io } from '../output.js'
import type { StoreFlags } from '../project-option.js'
import { withStore } from '../with-store.js'

export interface QuarantineCommandOptions extends StoreFlags {
  reason?: string
  owner?: string
  issue?: string
  expires?: string
  actor?: string
  json?: boolean
  output?: string
  file?: string
  dryRun?: boolean
  asOf?: string
  allowUnknown?: boolean
}

export interface RuleCommandOptions extends QuarantineCommandOptions {
  testId?: string
  filePath?: string
  title?: string
  message?: string
  branch?: string
  env?: string[]
  /** Allow a rule that selects every failure (see broadMatchProblem). */
  allowBroad?: boolean
}

/** Who is acting, for the audit log: the flag, else the CI user, else the local user. */
export function resolveActor(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  return (
    flag ??
    env.FLAKEWATCH_ACTOR ??
    env.GITLAB_USER_LOGIN ??
    env.GITHUB_ACTOR ??
    env.BUILDKITE_BUILD_CREATOR ??
    env.USER ??
    'unknown'
  )
}

/** `--expires` takes an ISO date, a number of days (`14d` or `14`), or `never`. */
export function parseExpiry(value: string | undefined, now = Date.now()): string | null | undefined {
  if (value === undefined) return undefined
  if (value === 'never') return null
  const days = /^(\d+)d?$/.exec(value)
  if (days) {
    const at = new Date(now + Number(days[1]) * 86_400_000)
    // A day count past year 275760 is no date at all (toISOString would throw): a usage error, said as one.
    if (Number.isNaN(at.getTime())) throw new InputError(`--expires: ${value.slice(0, 40)} days is beyond any date`)
    return at.toISOString()
  }
  const t = Date.parse(value)
  if (Number.isNaN(t))
    throw new InputError(`--expires: expected a date, a number of days or "never", got "${value.slice(0, 200)}"`)
  return validateExpiry(new Date(t).toISOString(), now, '--expires')
}

function manager(store: Store, config: ResolvedConfig, analyze?: () => Promise<PolicyTest[]>) {
  const ownersOf = ownerLookupFromConfig(config, process.cwd())
  const codeOwner = async (testId: string) => {
    const test = await store.getTest(testId)
    const owners = test ? ownersOf(test) : []
    return owners.length ? owners.join(' ') : null
  }
  return createQuarantineManager({
    store,
    policy: config.quarantine,
    analyze,
    defaultOwner: config.quarantine.owner,
    codeOwner,
  })
}

/** What `quarantine list` shows: single tests, and rules with what each covered lately. */
export interface QuarantineListing {
  quarantined: QuarantineRecord[]
  rules: (QuarantineRule & { covered: RuleCoverage })[]
}

export function printListing(listing: QuarantineListing, opts: QuarantineCommandOptions, io: Io): void {
  if (opts.json) {
    return emitJson(
      io,
      {
        quarantined: listing.quarantined,
        rules: listing.rules.map(({ covered, ...r }) => ({
          ...r,
          match: ruleMatchToJson(r.match),
          covered: {
            days: RULE_COVERAGE_DAYS,
            tests: covered.tests,
            failures: covered.failures,
            test_ids: covered.testIds,
          },
        })),
      },
      opts.output,
    )
  }
  if (listing.quarantined.length) printRecords(listing.quarantined, opts, io)
  else io.stderr.write('no single tests are quarantined\n')
  if (!listing.rules.length) return void io.stderr.write('no quarantine rules\n')
  io.stdout.write(
    `\n${renderTable(
      ['rule', 'matches', 'reason', 'owner', 'expires', `covered (${RULE_COVERAGE_DAYS}d)`],
      listing.rules.map((r) => [
        r.id,
        describeRuleMatch(r.match),
        r.reason,
        r.owner ?? '–',
        r.expiresAt?.slice(0, 10) ?? 'never',
        r.covered.tests === 0
          ? 'nothing'
          : `${r.covered.tests} test(s), ${r.covered.failures} failure(s): ${r.covered.testIds.slice(0, 3).join(', ')}${r.covered.tests > 3 ? ', …' : ''}`,
      ]),
    )}\n`,
  )
}

export function printRecords(records: QuarantineRecord[], opts: QuarantineCommandOptions, io: Io): void {
  if (opts.json) return emitJson(io, records, opts.output)
  if (!records.length) return void io.stderr.write('no tests are quarantined\n')
  io.stdout.write(
    `${renderTable(
      ['test', 'reason', 'owner', 'source', 'expires'],
      records.map((r) => [r.testId, r.reason, r.owner ?? '–', r.source, r.expiresAt?.slice(0, 10) ?? 'never']),
    )}\n`,
  )
}

export async function quarantineAdd(testId: string, opts: QuarantineCommandOptions, io: Io): Promise<QuarantineRecord> {
  if (!opts.reason) throw new InputError('quarantine add needs --reason')
  const expiresAt = parseExpiry(opts.expires)
  return withStore(opts, io, async (store, config) => {
    testId = await storedTestId(store, testId, io)
    if (opts.allowUnknown && !(await store.getTest(testId))) {
      io.stderr.write(`warning: ${testId} has no stored results yet\n`)
    }
    return manager(store, config).quarantine(testId, {
      reason: opts.reason!,
      owner: opts.owner,
      issueUrl: opts.issue,
      expiresAt,
      actor: resolveActor(opts.actor, io.env),
      allowUnknown: opts.allowUnknown,
    })
  })
}

export async function quarantineRemove(testId: string, opts: QuarantineCommandOptions, io: Io): Promise<boolean> {
  if (!opts.reason) throw new InputError('quarantine remove needs --reason')
  return withStore(opts, io, async (store, config) => {
    // A quarantine kept under the id as typed (one added with --allow-unknown) is released as it is.
    if (!(await store.getQuarantine(testId))) testId = await storedTestId(store, testId, io)
    return manager(store, config).unquarantine(testId, {
      reason: opts.reason!,
      actor: resolveActor(opts.actor, io.env),
    })
  })
}

/**
 * The id of the stored test a typed id names: itself, or the test it was seen under another name of, or the one
 * test ingest would match it to (see `findTest`), said on stderr. An id that fits several tests is refused with
 * them listed; one that names none stays as typed (the manager then refuses it unless --allow-unknown).
 */
async function storedTestId(store: Store, requested: string, io: Io): Promise<string> {
  const found = await findTest(store, requested, { match: true })
  if (found.kind === 'ambiguous') {
    throw new InputError(
      `${requested} fits several stored tests: ${found.candidates.join(', ')}; give one of their ids ` +
        '(or `flakewatch tests merge` them if they are one test)',
    )
  }
  if (found.kind !== 'found' || found.how === 'id') return requested
  io.stderr.write(
    `${requested} is ${found.how === 'name' ? 'a name of' : 'matched, as ingest would, to'} ${found.ref.testId}\n`,
  )
  return found.ref.testId
}

export function quarantineList(opts: QuarantineCommandOptions, io: Io, now = Date.now()): Promise<QuarantineListing> {
  // An owner field may hold several code owners joined with spaces: `--owner @a` matches any of them.
  const owned = (r: { owner: string | null }) => !opts.owner || (r.owner ?? '').split(/\s+/).includes(opts.owner)
  return withStore(
    opts,
    io,
    async (store) => {
      const quarantined = (await store.listQuarantines()).filter(owned)
      const rules = (await store.listQuarantineRules()).filter(owned)
      const since = now - RULE_COVERAGE_DAYS * 86_400_000
      const coverage = rules.length ? await ruleCoverage(store.scanHistory({ since }), rules) : []
      return { quarantined, rules: rules.map((r, i) => ({ ...r, covered: coverage[i]! })) }
    },
    'read',
  )
}

/** `--env runner=arm64` pairs into facets; a pair without `=` is a usage error. */
function envPairs(pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs?.length) return undefined
  const env: Record<string, string> = {}
  for (const p of pairs) {
    const at = p.indexOf('=')
    if (at <= 0) throw new InputError(`--env: expected key=value, got "${p}"`)
    env[p.slice(0, at)] = p.slice(at + 1)
  }
  return env
}

export async function ruleAdd(id: string, opts: RuleCommandOptions, io: Io): Promise<QuarantineRule> {
  if (!opts.reason) throw new InputError('quarantine rule add needs --reason')
  const match: RuleMatch = {}
  if (opts.testId) match.testId = opts.testId
  if (opts.filePath) match.file = opts.filePath
  if (opts.title) match.title = opts.title
  if (opts.message) match.message = opts.message
  if (opts.branch) match.branch = opts.branch
  const env = envPairs(opts.env)
  if (env) match.env = env
  if (opts.allowBroad) match.allowBroad = true
  const expiresAt = parseExpiry(opts.expires)
  return withStore(opts, io, (store, config) =>
    manager(store, config).putRule(id, {
      match,
      reason: opts.reason!,
      owner: opts.owner,
      issueUrl: opts.issue,
      expiresAt,
      actor: resolveActor(opts.actor, io.env),
    }),
  )
}

export async function ruleRemove(id: string, opts: QuarantineCommandOptions, io: Io): Promise<boolean> {
  if (!opts.reason) throw new InputError('quarantine rule remove needs --reason')
  return withStore(opts, io, (store, config) =>
    manager(store, config).removeRule(id, { reason: opts.reason!, actor: resolveActor(opts.actor, io.env) }),
  )
}

export function printRule(rule: QuarantineRule, opts: QuarantineCommandOptions, io: Io): void {
  if (opts.json) return emitJson(io, { ...rule, match: ruleMatchToJson(rule.match) }, opts.output)
  io.stdout.write(
    `${renderTable(
      ['rule', 'matches', 'reason', 'owner', 'expires'],
      [
        [
          rule.id,
          describeRuleMatch(rule.match),
          rule.reason,
          rule.owner ?? '–',
          rule.expiresAt?.slice(0, 10) ?? 'never',
        ],
      ],
    )}\n`,
  )
}

export async function quarantineAuto(opts: QuarantineCommandOptions, io: Io): Promise<AutoUpdateResult> {
  return withStore(
    opts,
    io,
    async (store, config, project) => {
      const { policyTestsFromStore } = await import('../../quarantine/from-analysis.js')
      const { parseAsOf } = await import('./analyze.js')
      // The same as-of time as `analyze` (the newest run, or --as-of), so that it acts on the verdicts analyze prints.
      const asOf = parseAsOf(opts.asOf)
      const analyses: TestAnalysis[] = []
      const m = manager(store, config, () => policyTestsFromStore(store, config, asOf, (a) => analyses.push(a)))
      const result = await m.autoUpdate({ actor: 'flakewatch', dryRun: opts.dryRun })
      // After the changes, so that this run's quarantines and releases are announced with the verdicts.
      if (!opts.dryRun) await (await import('./notify.js')).notifyQuietly(store, config, analyses, io, project)
      return result
    },
    // It writes (unless a dry run), but only from a history: without a database there is nothing to decide from.
    opts.dryRun ? 'read' : 'existing',
  )
}

export function printAuto(result: AutoUpdateResult, opts: QuarantineCommandOptions, io: Io): void {
  if (opts.json) return emitJson(io, opts.dryRun ? { dry_run: true, ...result } : result, opts.output)
  if (opts.dryRun) io.stderr.write('dry run: nothing was changed; this is what quarantine auto would do\n')
  const rows = [
    ...result.quarantined.map((q) => ['quarantine', q.testId, q.reason]),
    ...result.unquarantined.map((q) => ['release', q.testId, q.reason]),
    ...result.expired.map((q) => ['expire', q.testId, q.reason]),
  ]
  const header = opts.dryRun ? ['would', 'test', 'reason'] : ['action', 'test', 'reason']
  if (rows.length) io.stdout.write(`${renderTable(header, rows)}\n`)
  else io.stderr.write(opts.dryRun ? 'dry run: no quarantine changes would be made\n' : 'no quarantine changes\n')
  if (result.overCap.length) {
    io.stderr.write(
      `\nWARNING: the quarantine cap is reached; ${result.overCap.length} flaky test(s) were NOT quarantined:\n` +
        result.overCap.map((o) => `  ${o.testId}: ${o.reason}\n`).join('') +
        'Fix or release quarantined tests, or raise quarantine.maxQuarantined.\n',
    )
  }
}

export async function quarantineExport(
  opts: QuarantineCommandOptions,
  io: Io,
): Promise<{ file: string; count: number; rules: number }> {
  return withStore(
    opts,
    io,
    async (store, config) => {
      const file = opts.file ?? opts.output ?? config.quarantine.file
      const records = await store.listQuarantines()
      const rules = await store.listQuarantineRules()
      writeQuarantineFile(file, { records, rules })
      return { file, count: records.length, rules: rules.length }
    },
    'read',
  )
}

export async function quarantineImport(opts: QuarantineCommandOptions, io: Io) {
  return withStore(opts, io, async (store, config) => {
    const file = opts.file ?? config.quarantine.file
    const set = readQuarantineFile(file)
    const actor = resolveActor(opts.actor, io.env)
    return { file, ...(await importQuarantineFile(store, set, actor, { allowUnknown: opts.allowUnknown, file })) }
  })
}

export async function prune(opts: { db?: string; config?: string; days: string; json?: boolean }, io: Io) {
  const days = Number(opts.days)
  if (!Number.isFinite(days) || days <= 0) throw new InputError(`--days must be a positive number, got "${opts.days}"`)
  // Pruning a store that does not exist would create an empty one and report nothing pruned.
  return withStore(
    opts,
    io,
    async (store) => {
      const now = Date.now()
      const pruned = await store.prune(now - days * 86_400_000)
      // The upkeep `serve` does daily, for stores that only a scheduled prune looks after (docs/scaling.md).
      const kept = await store.maintain(now)
      if (kept.failed) io.stderr.write(`warning: ${kept.failed} day partition(s) not made this time: ${kept.error}\n`)
      return pruned
    },
    'existing',
  )
}
