import { hostname } from 'node:os'
import { randomUUID } from 'node:crypto'
import type { TestAnalysis } from '../analysis/types.js'
import type { TicketsConfig } from '../config/defaults.js'
import type { ResolvedConfig } from '../config/load.js'
import { currentTests } from '../notify/detect.js'
import { ownerLookupFromConfig } from '../owners/read-codeowners.js'
import { explainTest } from '../pipeline/explain-test.js'
import type { Store } from '../store/store.js'
import type { TicketRow } from '../store/tickets.js'
import { ticketBody, ticketTitle } from './content.js'
import { openTracker } from './open-tracker.js'
import { planTickets, wantsTicket, type TicketPlan, type TicketPolicy } from './plan.js'
import { syncTickets, type SyncSummary } from './sync.js'
import type { TrackerHttpOptions } from './trackers/http.js'
import type { TicketTracker } from './trackers/tracker.js'

/** Who changes a quarantine's issue link, in the audit trail. */
export const TICKETS_ACTOR = 'flakewatch-tickets'

export interface TicketLookOptions {
  store: Store
  config: ResolvedConfig
  /** The whole store's analysis (every suite, every branch), as `analyze` computes it. */
  analyses: TestAnalysis[]
  env: Record<string, string | undefined>
  project: string | null
  /** Where CODEOWNERS is looked for when the config has no file. */
  cwd: string
  /** Plan only: nothing recorded, the tracker not called. */
  dryRun?: boolean
  now?: number
  /** The tracker (tests give one with their own retries and sleep); default: from the config and environment. */
  tracker?: TicketTracker
  http?: TrackerHttpOptions
}

export interface TicketLookOutcome {
  plan: TicketPlan
  /** Null on a dry run. */
  sync: SyncSummary | null
  /** Quarantines whose issue link was set to their ticket. */
  linked: string[]
}

/** The policy of a tickets config, defaults filled in. */
export function ticketPolicy(t: TicketsConfig): TicketPolicy {
  return { openOn: t.openOn ?? ['flaky', 'quarantined'], commentOnFailure: t.commentOnFailure ?? true }
}

/** This process, as a lease owner: unique, and readable in the store. */
const processOwner = () => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`

/**
 * One look for the tickets, after the analysis: plans what each test's ticket should be (open, close, comment),
 * records it with the states it came from, then works through the tickets with something to do, each under a
 * lease. The ticket's link goes on the test's quarantine when it has none. Throws only for a configuration error
 * (no tracker configured, a token missing); a tracker's failure is a failed ticket, retried by a later look.
 */
export async function lookForTickets(o: TicketLookOptions): Promise<TicketLookOutcome> {
  const settings = o.config.tickets
  if (!settings) throw new Error('no ticket tracker is configured (tickets in the config)')
  const now = o.now ?? Date.now()
  const policy = ticketPolicy(settings)
  const tracker = o.dryRun ? null : (o.tracker ?? openTracker(settings, o.env, o.http))
  const tickets = o.store.tickets()
  const previous = new Map((await tickets.listStates()).map((s) => [s.testId, s]))
  const quarantines = new Map((await o.store.listQuarantines()).map((q) => [q.testId, q]))
  const analyses = new Map(o.analyses.map((a) => [a.testId, a]))
  const current = currentTests(o.analyses, quarantines, previous)
  // The rows of the tests that may have a ticket: those that should now, or did at the last look.
  const rows = new Map<string, TicketRow>()
  for (const t of current) {
    const prev = previous.get(t.testId)
    const maybe =
      wantsTicket(policy, t.verdict, t.quarantine !== null) ||
      (prev !== undefined && (prev.verdict === 'flaky' || prev.verdict === 'broken' || prev.quarantined))
    if (!maybe) continue
    const row = await tickets.get(t.testId)
    if (row) rows.set(t.testId, row)
  }
  const links = { serverUrl: o.config.notifications.serverUrl, project: o.project }
  const plan = planTickets({
    previous,
    current,
    analyses,
    rows,
    policy,
    tracker: settings.tracker,
    project: o.project,
    links,
    now,
  })
  if (o.dryRun || !tracker) return { plan, sync: null, linked: [] }
  await tickets.recordChanges(plan.states, plan.wants)

  const ownersOf = ownerLookupFromConfig(o.config, o.cwd)
  const assign = settings.assignOwners ?? true
  const linked: string[] = []
  const link = async (testId: string, url: string) => {
    const q = await o.store.getQuarantine(testId)
    if (!q || q.issueUrl) return
    await o.store.putQuarantine(
      { ...q, issueUrl: url },
      {
        action: 'update',
        actor: TICKETS_ACTOR,
        at: new Date().toISOString(),
        reason: `ticket ${url}`,
        source: q.source,
      },
    )
    linked.push(testId)
  }
  const sync = await syncTickets({
    tickets,
    tracker,
    owner: processOwner(),
    labels: settings.labels ?? [],
    limit: settings.maxPerPass ?? 50,
    onLinked: link,
    content: async (row) => {
      const e = await explainTest(o.store, o.config, row.testId, { ownersOf: assign ? ownersOf : undefined })
      if (!e) return null
      return { title: ticketTitle(e), blocks: ticketBody(e, row.reason, links), owners: e.owners }
    },
  })
  // A test quarantined after its ticket was opened (for flakiness) gets the link too.
  for (const [testId, q] of quarantines) {
    if (q.issueUrl || linked.includes(testId)) continue
    const row = rows.get(testId) ?? (await tickets.get(testId))
    if (row?.url && row.wanted === 'open') await link(testId, row.url)
  }
  return { plan, sync, linked }
}

/** One line for a look: what was planned, and what the tracker now has. */
export function ticketsSummary(o: TicketLookOutcome): string {
  const count = (a: string) => o.plan.actions.filter((x) => x.action === a).length
  const planned = `tickets: ${count('open')} to open, ${count('close')} to close, ${count('comment')} comment(s)`
  const deferred = o.plan.deferred ? `, ${o.plan.deferred} left for the next look` : ''
  const s = o.sync
  const synced = s ? `; ${s.opened} opened, ${s.closed} closed, ${s.commented} commented, ${s.failed} failed` : ''
  return `${planned}${deferred}${synced}`
}

/** What a ticket look tells its caller (the server's notifier): lines to print, never an exception. */
export interface TicketLookReport {
  warnings: string[]
  summary: string | null
}

/**
 * A ticket look for `serve`, on the same look as its webhooks: every failure becomes a warning, and a look that
 * planned and did nothing says nothing.
 */
export async function ticketsFromAnalyses(
  store: Store,
  analyses: TestAnalysis[],
  req: { config: ResolvedConfig; env: Record<string, string | undefined>; project: string | null; cwd: string },
): Promise<TicketLookReport> {
  if (!req.config.tickets) return { warnings: [], summary: null }
  try {
    const o = await lookForTickets({ store, analyses, ...req })
    const warnings = (o.sync?.tickets ?? []).flatMap((t) => (t.error ? [`ticket of ${t.testId}: ${t.error}`] : []))
    if (o.sync?.rateLimitedUntil) {
      warnings.push(`tickets: the tracker is rate limiting until ${new Date(o.sync.rateLimitedUntil).toISOString()}`)
    }
    const quiet = o.plan.actions.length === 0 && (o.sync?.tickets.length ?? 0) === 0
    return { warnings, summary: quiet ? null : ticketsSummary(o) }
  } catch (error) {
    return { warnings: [`tickets not synced: ${(error as Error).message}`], summary: null }
  }
}
