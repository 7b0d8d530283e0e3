import { InputError } from '../errors.js'
import type { AuditAction, QuarantineRecord, QuarantineSource, Store } from '../store/store.js'
import { isActive } from './gate.js'
import { decideQuarantine, type PolicyDecision, type PolicyTest, type QuarantinePolicy } from './policy.js'

const DAY = 86_400_000

export interface QuarantineInput {
  reason: string
  owner?: string | null
  issueUrl?: string | null
  /** ISO time, or null for no expiry. Default: `policy.expiryDays` from now. */
  expiresAt?: string | null
  actor?: string
  source?: QuarantineSource
}

export interface AutoUpdateResult {
  quarantined: QuarantineRecord[]
  unquarantined: { testId: string; reason: string }[]
  expired: { testId: string; reason: string }[]
  /** Qualified but refused because `maxQuarantined` was reached. */
  overCap: { testId: string; reason: string }[]
}

export interface QuarantineManagerOptions {
  store: Store
  policy: QuarantinePolicy
  /** Supplies every test's analysis for `autoUpdate`; one scan of the store. */
  analyze?: () => Promise<PolicyTest[]>
  now?: () => number
  defaultOwner?: string | null
  /** The test's code owners (CODEOWNERS), joined with spaces: the owner of a quarantine nobody gave one. */
  codeOwner?: (testId: string) => Promise<string | null>
}

/**
 * Quarantine records with an audit trail. Every change goes through here so that it is audited, and every
 * automatic change follows the one policy in `policy.ts`.
 * @example await createQuarantineManager({ store, policy }).quarantine('unit::a::b', { reason: 'flaky', actor: 'me' })
 */
export class QuarantineManager {
  private readonly now: () => number
  constructor(private readonly opts: QuarantineManagerOptions) {
    this.now = opts.now ?? Date.now
  }

  async quarantine(testId: string, input: QuarantineInput): Promise<QuarantineRecord> {
    if (!testId.trim()) throw new InputError('a test id is required')
    if (!input.reason.trim()) throw new InputError('a quarantine needs a reason')
    const now = this.now()
    const previous = await this.opts.store.getQuarantine(testId)
    const expiresAt =
      input.expiresAt === undefined ? new Date(now + this.opts.policy.expiryDays * DAY).toISOString() : input.expiresAt
    if (expiresAt && Number.isNaN(Date.parse(expiresAt))) throw new InputError(`invalid expiry "${expiresAt}"`)
    const actor = input.actor ?? 'unknown'
    const record: QuarantineRecord = {
      testId,
      reason: input.reason,
      owner: input.owner ?? previous?.owner ?? (await this.defaultOwnerOf(testId)),
      issueUrl: input.issueUrl ?? previous?.issueUrl ?? null,
      createdAt: previous?.createdAt ?? new Date(now).toISOString(),
      createdBy: previous?.createdBy ?? actor,
      expiresAt,
      source: input.source ?? 'manual',
    }
    const action: AuditAction = previous ? 'update' : 'quarantine'
    await this.opts.store.putQuarantine(record, {
      action,
      actor,
      at: new Date(now).toISOString(),
      reason: input.reason,
      source: record.source,
    })
    return record
  }

  unquarantine(testId: string, input: { reason: string; actor?: string; action?: AuditAction }): Promise<boolean> {
    return this.opts.store.deleteQuarantine(testId, {
      action: input.action ?? 'release',
      actor: input.actor ?? 'unknown',
      at: new Date(this.now()).toISOString(),
      reason: input.reason,
      source: null,
    })
  }

  /** True while a quarantine is in force (expired ones do not count). */
  async isQuarantined(testId: string): Promise<boolean> {
    const q = await this.opts.store.getQuarantine(testId)
    return Boolean(q && isActive(q, this.now()))
  }

  list(): Promise<QuarantineRecord[]> {
    return this.opts.store.listQuarantines()
  }

  /** What `autoUpdate` would do, without doing it. */
  async plan(): Promise<PolicyDecision> {
    if (!this.opts.analyze) throw new InputError('autoUpdate needs an analysis source')
    const tests = await this.opts.analyze()
    return decideQuarantine(tests, await this.list(), this.opts.policy, this.now())
  }

  /**
   * Applies the policy: expires, releases and quarantines, each audited as the `flakewatch` actor.
   * Returns `{ quarantined, unquarantined }` as in the Breadcrumb design, plus expiries and refusals at the cap.
   */
  async autoUpdate(opts: { actor?: string; dryRun?: boolean } = {}): Promise<AutoUpdateResult> {
    const decision = await this.plan()
    const actor = opts.actor ?? 'flakewatch'
    const result: AutoUpdateResult = {
      quarantined: [],
      unquarantined: decision.release,
      expired: decision.expire,
      overCap: decision.overCap,
    }
    if (opts.dryRun) {
      for (const q of decision.quarantine) result.quarantined.push(await this.preview(q.testId, q.reason))
      return result
    }
    for (const e of decision.expire) await this.unquarantine(e.testId, { reason: e.reason, actor, action: 'expire' })
    for (const r of decision.release) await this.unquarantine(r.testId, { reason: r.reason, actor })
    for (const q of decision.quarantine) {
      result.quarantined.push(await this.quarantine(q.testId, { reason: q.reason, actor, source: 'auto' }))
    }
    return result
  }

  private async defaultOwnerOf(testId: string): Promise<string | null> {
    return (await this.opts.codeOwner?.(testId)) ?? this.opts.defaultOwner ?? null
  }

  private async preview(testId: string, reason: string): Promise<QuarantineRecord> {
    const now = this.now()
    return {
      testId,
      reason,
      owner: await this.defaultOwnerOf(testId),
      issueUrl: null,
      createdAt: new Date(now).toISOString(),
      createdBy: 'flakewatch',
      expiresAt: new Date(now + this.opts.policy.expiryDays * DAY).toISOString(),
      source: 'auto',
    }
  }
}

export function createQuarantineManager(opts: QuarantineManagerOptions): QuarantineManager {
  return new QuarantineManager(opts)
}
