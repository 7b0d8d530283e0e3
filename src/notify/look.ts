import type { TestAnalysis } from '../analysis/types.js'
import { analysisOptions, type ResolvedConfig } from '../config/load.js'
import { ownerLookupFromConfig } from '../owners/read-codeowners.js'
import { analyzeStore } from '../pipeline/analyze-store.js'
import type { Store } from '../store/store.js'
import { ticketsFromAnalyses } from '../tickets/look.js'
import { notifyStateChanges, type NotifyOutcome } from './notify.js'

/**
 * What a look needs besides the store: plain data, so that it can cross to the analysis worker thread.
 */
export interface LookRequest {
  config: ResolvedConfig
  /** Where `urlEnv` and `secretEnv` are read. */
  env: Record<string, string | undefined>
  /** The project key on a multi-project server (it goes into every payload); null on a single-project one. */
  project: string | null
  /** Where CODEOWNERS is looked for when the config has no file. */
  cwd: string
}

/** What a look tells its caller: lines to print, never an exception. */
export interface LookReport {
  warnings: string[]
  /** One line when anything happened (changes, deliveries, a first look); null otherwise. */
  summary: string | null
}

/** One line for a look's outcome: a first look, or its changes, messages queued and deliveries. */
export function summaryLine(o: NotifyOutcome): string {
  if (o.baseline) return 'notifications: first look, recorded the state of the tests; changes from now on are announced'
  const d = o.delivery
  const sent = d ? `, ${d.delivered} delivered, ${d.pending} to retry, ${d.failed} failed` : ''
  return `notifications: ${o.changes.length + o.ruleChanges.length} change(s), ${o.enqueued} queued${sent}`
}

/** The warnings and the summary line of one look's outcome, as every caller prints them. */
export function reportOf(o: NotifyOutcome): LookReport {
  const quiet = !o.baseline && o.changes.length + o.ruleChanges.length === 0 && !o.delivery?.attempts
  return { warnings: [...o.warnings, ...(o.delivery?.errors ?? [])], summary: quiet ? null : summaryLine(o) }
}

/**
 * One look for state changes and a delivery pass, for a caller that already has the whole store's analysis.
 * Every failure becomes a warning: a notification never changes what its caller does.
 */
export async function notifyFromAnalyses(
  store: Store,
  analyses: TestAnalysis[],
  req: LookRequest,
): Promise<{ outcome: NotifyOutcome | null; report: LookReport }> {
  if (req.config.notifications.webhooks.length === 0) return { outcome: null, report: { warnings: [], summary: null } }
  try {
    const outcome = await notifyStateChanges({
      store,
      settings: req.config.notifications,
      project: req.project,
      analyses,
      env: req.env,
      ownersOf: ownerLookupFromConfig(req.config, req.cwd),
    })
    return { outcome, report: reportOf(outcome) }
  } catch (error) {
    return {
      outcome: null,
      report: { warnings: [`notifications not sent: ${(error as Error).message}`], summary: null },
    }
  }
}

/**
 * A whole look, analysis included: what `flakewatch serve` runs every `notifications.intervalSeconds`, in its
 * analysis worker thread when it has one (the analysis scans the whole store): webhooks, then tickets. `scanStore` may be a read-only
 * connection; `store` takes the new states and the outbox.
 * @example const report = await lookForChanges(store, store, { config, env: process.env, project: null, cwd: '.' })
 */
export async function lookForChanges(store: Store, scanStore: Store, req: LookRequest): Promise<LookReport> {
  let analyses: TestAnalysis[]
  try {
    analyses = await analyzeStore(scanStore, { config: analysisOptions(req.config) })
  } catch (error) {
    return { warnings: [`notifications: ${(error as Error).message}`], summary: null }
  }
  const { report } = await notifyFromAnalyses(store, analyses, req)
  // Tickets follow the same state changes, from the same analysis.
  const tickets = await ticketsFromAnalyses(store, analyses, req)
  const summary = [report.summary, tickets.summary].filter((s): s is string => s !== null)
  return { warnings: [...report.warnings, ...tickets.warnings], summary: summary.length ? summary.join('; ') : null }
}
