import { analysisOptions } from '../../config/load.js'
import { InputError } from '../../errors.js'
import { analyzeStore } from '../../pipeline/analyze-store.js'
import { MAX_TICKET_PAGE, type TicketRow } from '../../store/tickets.js'
import { lookForTickets, ticketsSummary, type TicketLookOutcome } from '../../tickets/look.js'
import { emitJson, renderTable, type Io } from '../output.js'
import type { StoreFlags } from '../project-option.js'
import { parseAsOf } from './analyze.js'
import { withReadStore, withStore } from '../with-store.js'

export interface TicketsCommandOptions extends StoreFlags {
  asOf?: string
  dryRun?: boolean
  json?: boolean
  output?: string
}

export interface TicketsListOptions extends StoreFlags {
  limit?: string
  json?: boolean
  output?: string
}

/**
 * `flakewatch tickets sync` (and `plan`, a dry run): one look for the tickets, as `serve` makes on its notification
 * interval. A dry run opens the store read-only and never calls the tracker.
 */
export async function ticketsSync(opts: TicketsCommandOptions, io: Io): Promise<TicketLookOutcome> {
  const asOf = parseAsOf(opts.asOf)
  return withStore(
    opts,
    io,
    async (store, config, project) => {
      if (!config.tickets) {
        throw new InputError(`no ticket tracker is configured (tickets in ${config.file ?? 'flakewatch.config.json'})`)
      }
      const analyses = await analyzeStore(store, { config: analysisOptions(config), now: asOf })
      return lookForTickets({
        store,
        config,
        analyses,
        env: io.env,
        project,
        cwd: process.cwd(),
        dryRun: opts.dryRun,
      })
    },
    opts.dryRun ? 'read' : 'existing',
  )
}

export function printTickets(o: TicketLookOutcome, opts: TicketsCommandOptions, io: Io): void {
  for (const t of o.sync?.tickets ?? []) {
    if (t.error) io.stderr.write(`flakewatch: warning: ticket of ${t.testId}: ${t.error}\n`)
  }
  if (o.sync?.rateLimitedUntil) {
    const until = new Date(o.sync.rateLimitedUntil).toISOString()
    io.stderr.write(`flakewatch: warning: the tracker is rate limiting; the rest waits until ${until}\n`)
  }
  if (opts.json) {
    return emitJson(
      io,
      {
        ...(opts.dryRun && { dryRun: true }),
        baseline: o.plan.baseline,
        actions: o.plan.actions,
        deferred: o.plan.deferred,
        sync: o.sync && {
          opened: o.sync.opened,
          closed: o.sync.closed,
          commented: o.sync.commented,
          failed: o.sync.failed,
          rateLimitedUntil: o.sync.rateLimitedUntil && new Date(o.sync.rateLimitedUntil).toISOString(),
          tickets: o.sync.tickets,
        },
        linked: o.linked,
      },
      opts.output,
    )
  }
  if (opts.dryRun) io.stderr.write('dry run: nothing was recorded or sent\n')
  if (o.plan.actions.length) {
    io.stdout.write(
      `${renderTable(
        ['action', 'test', 'why'],
        o.plan.actions.map((a) => [a.action, a.testId, a.reason]),
      )}\n`,
    )
  }
  if (o.sync?.tickets.length) {
    const rows = o.sync.tickets.map((t) => [t.testId, t.key ?? '–', t.did.join(', ') || '–', t.error ?? t.url ?? ''])
    io.stdout.write(`${renderTable(['test', 'ticket', 'done', 'link or error'], rows)}\n`)
  }
  io.stderr.write(`${ticketsSummary(o)}\n`)
}

/** `flakewatch tickets list`: each test's ticket, most recently changed first. */
export async function ticketsList(opts: TicketsListOptions, io: Io): Promise<TicketRow[]> {
  const limit = opts.limit === undefined ? 50 : Number(opts.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_TICKET_PAGE) {
    throw new InputError(`--limit: expected a whole number from 1 to ${MAX_TICKET_PAGE}, got "${opts.limit}"`)
  }
  return withReadStore(opts, io, (store) => store.tickets().list({ limit }))
}

export function printTicketsList(rows: TicketRow[], opts: TicketsListOptions, io: Io): void {
  if (opts.json) {
    return emitJson(
      io,
      rows.map(({ leaseOwner: _owner, leaseUntil: _until, ...r }) => ({
        ...r,
        nextAttemptAt: new Date(r.nextAttemptAt).toISOString(),
        lastFailureAt: r.lastFailureAt === null ? null : new Date(r.lastFailureAt).toISOString(),
        pendingComment: r.pendingComment !== null,
      })),
      opts.output,
    )
  }
  if (rows.length === 0) {
    io.stderr.write('no tickets\n')
    return
  }
  io.stdout.write(
    `${renderTable(
      ['test', 'tracker', 'ticket', 'wanted', 'tracker has', 'attempts', 'last error or link'],
      rows.map((r) => [
        r.testId,
        r.tracker,
        r.key ?? '–',
        r.wanted,
        r.actual ?? 'none',
        String(r.attempts),
        r.lastError ?? r.url ?? '',
      ]),
    )}\n`,
  )
}
