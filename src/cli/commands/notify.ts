import type { TestAnalysis } from '../../analysis/types.js'
import { analysisOptions, type ResolvedConfig } from '../../config/load.js'
import { InputError } from '../../errors.js'
import { notifyFromAnalyses, summaryLine, type LookReport } from '../../notify/look.js'
import { ruleSubject } from '../../notify/detect-rules.js'
import { notifyStateChanges, type NotifyOutcome } from '../../notify/notify.js'
import { ownerLookupFromConfig } from '../../owners/read-codeowners.js'
import { analyzeStore } from '../../pipeline/analyze-store.js'
import { MAX_DELIVERY_LOG_PAGE, type Delivery, type DeliveryStatus } from '../../store/notifications.js'
import type { Store } from '../../store/store.js'
import { emitJson, renderTable, sanitizeCell, type Io } from '../output.js'
import type { StoreFlags } from '../project-option.js'
import { parseAsOf } from './analyze.js'
import { withReadStore, withStore } from '../with-store.js'

export interface NotifyCommandOptions extends StoreFlags {
  asOf?: string
  wait?: string
  dryRun?: boolean
  json?: boolean
  output?: string
}

export interface NotifyLogOptions extends StoreFlags {
  status?: DeliveryStatus
  webhook?: string
  limit?: string
  json?: boolean
  output?: string
}

function parseSeconds(value: string | undefined, flag: string, fallback: number, max: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!/^\d+(\.\d+)?$/.test(value) || n > max)
    throw new InputError(`${flag}: expected 0 to ${max} seconds, got "${value}"`)
  return n
}

/**
 * Runs one look for state changes and a delivery pass, for a caller that already has the analysis. Every failure
 * becomes a warning: a notification never changes a command's exit code.
 */
export async function notifyQuietly(
  store: Store,
  config: ResolvedConfig,
  analyses: TestAnalysis[],
  io: Io,
  project: string | null = null,
): Promise<NotifyOutcome | null> {
  const { outcome, report } = await notifyFromAnalyses(store, analyses, {
    config,
    env: io.env,
    project,
    cwd: process.cwd(),
  })
  printLook(io, project)(report)
  return outcome
}

/** Prints what one notification look found, on stderr, with the project's key on a multi-project server. */
export function printLook(io: Io, project: string | null = null): (report: LookReport) => void {
  const where = project === null ? '' : `${sanitizeCell(project)}: `
  return (report) => {
    for (const w of report.warnings) io.stderr.write(`flakewatch: warning: ${where}${w}\n`)
    if (report.summary) io.stderr.write(`${where}${report.summary}\n`)
  }
}

/** `flakewatch notify`: look for state changes now, queue their messages and send what is due. */
export async function notify(opts: NotifyCommandOptions, io: Io): Promise<NotifyOutcome> {
  const asOf = parseAsOf(opts.asOf)
  const maxWaitMs = parseSeconds(opts.wait, '--wait', 30, 3600) * 1000
  return withStore(
    opts,
    io,
    async (store, config, project) => {
      if (config.notifications.webhooks.length === 0) {
        throw new InputError(
          `no webhooks are configured (notifications.webhooks in ${config.file ?? 'flakewatch.config.json'})`,
        )
      }
      const analyses = await analyzeStore(store, { config: analysisOptions(config), now: asOf })
      return notifyStateChanges({
        store,
        settings: config.notifications,
        project,
        analyses,
        env: io.env,
        ownersOf: ownerLookupFromConfig(config, process.cwd()),
        dryRun: opts.dryRun,
        maxWaitMs,
      })
    },
    opts.dryRun ? 'read' : 'existing',
  )
}

export function printNotify(o: NotifyOutcome, opts: NotifyCommandOptions, io: Io): void {
  for (const w of o.warnings) io.stderr.write(`flakewatch: warning: ${w}\n`)
  for (const e of o.delivery?.errors ?? []) io.stderr.write(`flakewatch: warning: ${e}\n`)
  if (opts.json) {
    return emitJson(
      io,
      {
        ...(opts.dryRun && { dry_run: true }),
        baseline: o.baseline,
        changes: o.changes.map((c) => ({
          id: c.id,
          event: c.event,
          test_id: c.testId,
          previous: c.previous,
          current: c.current,
        })),
        rule_changes: o.ruleChanges.map((c) => ({ id: c.id, event: c.event, rule_id: c.ruleId })),
        enqueued: o.enqueued,
        unannounced: o.unannounced,
        delivery: o.delivery && {
          attempts: o.delivery.attempts,
          delivered: o.delivery.delivered,
          pending: o.delivery.pending,
          failed: o.delivery.failed,
        },
      },
      opts.output,
    )
  }
  if (opts.dryRun) io.stderr.write('dry run: nothing was recorded or sent\n')
  if (o.changes.length || o.ruleChanges.length) {
    const rows = [
      ...o.changes.map((c) => [c.event, c.testId]),
      ...o.ruleChanges.map((c) => [c.event, ruleSubject(c.ruleId)]),
    ]
    io.stdout.write(`${renderTable(['event', 'test'], rows)}\n`)
  }
  io.stderr.write(`${summaryLine(o)}\n`)
}

/** `flakewatch notify log`: the delivery log, newest first. */
export async function notifyLog(opts: NotifyLogOptions, io: Io): Promise<Delivery[]> {
  const limit = opts.limit === undefined ? 50 : Number(opts.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DELIVERY_LOG_PAGE) {
    throw new InputError(`--limit: expected a whole number from 1 to ${MAX_DELIVERY_LOG_PAGE}, got "${opts.limit}"`)
  }
  return withReadStore(opts, io, (store) =>
    store.notifications().listDeliveries({ status: opts.status, webhook: opts.webhook, limit }),
  )
}

export function printNotifyLog(rows: Delivery[], opts: NotifyLogOptions, io: Io): void {
  if (opts.json) {
    return emitJson(
      io,
      rows.map((d) => ({
        id: d.id,
        event_id: d.eventId,
        webhook: d.webhook,
        event: d.event,
        test_id: d.testId,
        status: d.status,
        attempts: d.attempts,
        created_at: d.createdAt,
        last_attempt_at: d.lastAttemptAt,
        last_status: d.lastStatus,
        last_error: d.lastError,
        delivered_at: d.deliveredAt,
        next_attempt_at: d.status === 'pending' ? new Date(d.nextAttemptAt).toISOString() : null,
      })),
      opts.output,
    )
  }
  if (rows.length === 0) {
    io.stderr.write('no deliveries\n')
    return
  }
  io.stdout.write(
    `${renderTable(
      ['id', 'created', 'webhook', 'event', 'test', 'status', 'attempts', 'last'],
      rows.map((d) => [
        String(d.id),
        d.createdAt.slice(0, 19).replace('T', ' '),
        d.webhook,
        d.event,
        d.testId,
        d.status,
        String(d.attempts),
        d.lastError ?? (d.lastStatus === null ? '–' : `HTTP ${d.lastStatus}`),
      ]),
      { right: [0, 6] },
    )}\n`,
  )
}
