import { loadConfig } from '../../config/load.js'
import { InputError } from '../../errors.js'
import { importQuarantineFile, readQuarantineFile, writeQuarantineFile } from '../../quarantine/file.js'
import { createQuarantineManager, type AutoUpdateResult } from '../../quarantine/manager.js'
import type { PolicyTest } from '../../quarantine/policy.js'
import type { QuarantineRecord, Store } from '../../store/store.js'
import { openStore } from '../../store/open.js'
import { ownerLookupFromConfig } from '../../owners/read-codeowners.js'
import { emitJson, renderTable, type Io } from '../output.js'

export interface QuarantineCommandOptions {
  db?: string
  config?: string
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
  if (days) return new Date(now + Number(days[1]) * 86_400_000).toISOString()
  const t = Date.parse(value)
  if (Number.isNaN(t)) throw new InputError(`--expires: expected a date, a number of days or "never", got "${value}"`)
  return new Date(t).toISOString()
}

export async function withStore<T>(
  opts: { db?: string; config?: string },
  io: Io,
  fn: (store: Store, config: ReturnType<typeof loadConfig>) => Promise<T>,
  access: { readOnly?: boolean } = {},
): Promise<T> {
  const config = loadConfig({ file: opts.config, env: io.env })
  const store = await openStore({ db: opts.db ?? config.db, env: {}, readOnly: access.readOnly })
  try {
    return await fn(store, config)
  } finally {
    await store.close()
  }
}

/**
 * `withStore` for commands that only read: the store opens without the write lock, so they answer while an
 * ingest is writing.
 */
export function withReadStore<T>(
  opts: { db?: string; config?: string },
  io: Io,
  fn: (store: Store, config: ReturnType<typeof loadConfig>) => Promise<T>,
): Promise<T> {
  return withStore(opts, io, fn, { readOnly: true })
}

function manager(store: Store, config: ReturnType<typeof loadConfig>, analyze?: () => Promise<PolicyTest[]>) {
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
  return withStore(opts, io, async (store, config) => {
    if (!(await store.getTest(testId))) io.stderr.write(`warning: ${testId} has no stored results yet\n`)
    return manager(store, config).quarantine(testId, {
      reason: opts.reason!,
      owner: opts.owner,
      issueUrl: opts.issue,
      expiresAt: parseExpiry(opts.expires),
      actor: resolveActor(opts.actor, io.env),
    })
  })
}

export async function quarantineRemove(testId: string, opts: QuarantineCommandOptions, io: Io): Promise<boolean> {
  if (!opts.reason) throw new InputError('quarantine remove needs --reason')
  return withStore(opts, io, async (store, config) =>
    manager(store, config).unquarantine(testId, { reason: opts.reason!, actor: resolveActor(opts.actor, io.env) }),
  )
}

export async function quarantineList(opts: QuarantineCommandOptions, io: Io): Promise<QuarantineRecord[]> {
  const all = await withReadStore(opts, io, (store) => store.listQuarantines())
  // An owner field may hold several code owners joined with spaces: `--owner @a` matches any of them.
  return opts.owner ? all.filter((r) => (r.owner ?? '').split(/\s+/).includes(opts.owner!)) : all
}

export async function quarantineAuto(opts: QuarantineCommandOptions, io: Io): Promise<AutoUpdateResult> {
  return withStore(opts, io, async (store, config) => {
    const { policyTestsFromStore } = await import('../../quarantine/from-analysis.js')
    const { parseAsOf } = await import('./analyze.js')
    // The same as-of time as `analyze` (the newest run, or --as-of), so that it acts on the verdicts analyze prints.
    const asOf = parseAsOf(opts.asOf)
    const m = manager(store, config, () => policyTestsFromStore(store, config, asOf))
    return m.autoUpdate({ actor: 'flakewatch', dryRun: opts.dryRun })
  })
}

export function printAuto(result: AutoUpdateResult, opts: QuarantineCommandOptions, io: Io): void {
  if (opts.json) return emitJson(io, result, opts.output)
  const rows = [
    ...result.quarantined.map((q) => ['quarantine', q.testId, q.reason]),
    ...result.unquarantined.map((q) => ['release', q.testId, q.reason]),
    ...result.expired.map((q) => ['expire', q.testId, q.reason]),
  ]
  if (rows.length) io.stdout.write(`${renderTable(['action', 'test', 'reason'], rows)}\n`)
  else io.stderr.write('no quarantine changes\n')
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
): Promise<{ file: string; count: number }> {
  return withStore(opts, io, async (store, config) => {
    const file = opts.file ?? opts.output ?? config.quarantine.file
    const records = await store.listQuarantines()
    writeQuarantineFile(file, records)
    return { file, count: records.length }
  })
}

export async function quarantineImport(opts: QuarantineCommandOptions, io: Io) {
  return withStore(opts, io, async (store, config) => {
    const file = opts.file ?? config.quarantine.file
    return { file, ...(await importQuarantineFile(store, readQuarantineFile(file), resolveActor(opts.actor, io.env))) }
  })
}

export async function prune(opts: { db?: string; config?: string; days: string; json?: boolean }, io: Io) {
  const days = Number(opts.days)
  if (!Number.isFinite(days) || days <= 0) throw new InputError(`--days must be a positive number, got "${opts.days}"`)
  return withStore(opts, io, (store) => store.prune(Date.now() - days * 86_400_000))
}
