import type { TestAnalysis } from '../analysis/types.js'
import { testUrl } from '../notify/payload.js'
import type { TestExplanation } from '../pipeline/explain-test.js'
import type { Block, Inline } from './document.js'

/** Failure modes a ticket shows, most frequent first, each with its sample message. */
export const TICKET_FAILURE_MODES = 3
/** Newest failing runs a ticket links to. */
export const TICKET_RECENT_FAILURES = 10
/** Evidence lines and hints a ticket lists. */
export const TICKET_LIST_ITEMS = 10

export interface TicketLinks {
  /** The dashboard (`notifications.serverUrl`): each test links to its page. */
  serverUrl: string | null
  project: string | null
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
const pct = (x: number | null) => (x === null ? 'n/a' : `${Math.round(x * 100)}%`)

/** The ticket's title: the test, in the tracker's one line. */
export function ticketTitle(e: Pick<TestExplanation, 'history'>): string {
  const t = e.history.test
  const title = `Flaky test: ${t.name} (${t.suite}${t.module ? ` · ${t.module}` : ''})`
  // eslint-disable-next-line no-control-regex
  const one = title.replace(/[\u0000-\u001f\u007f\s]+/g, ' ')
  return one.length > 200 ? `${one.slice(0, 199)}…` : one
}

/**
 * What `flakewatch show` says, as a ticket's body: why it was opened, the verdict and its evidence, failure modes
 * with a sample message, hints, owners, the quarantine, links to the failing runs and to the dashboard.
 */
export function ticketBody(e: TestExplanation, why: string, links: TicketLinks): Block[] {
  const a = e.analysis
  const t = e.history.test
  const blocks: Block[] = [
    { kind: 'paragraph', parts: [`flakewatch opened this ticket: ${why}. Test `, { code: a.testId }, '.'] },
    {
      kind: 'bullets',
      items: [
        [`Verdict: ${a.verdict}: ${a.reason}`],
        [
          `${a.runs} runs, ${a.failures} failed (pass rate ${pct(a.passRate)}), flip rate ${pct(a.flipRate)}, ` +
            `score ${a.score.toFixed(2)}, confidence ${a.confidence.toFixed(2)}`,
        ],
        ...(t.file ? [['File: ', { code: t.file }] as Inline[]] : []),
        [`Owners: ${e.owners.length ? e.owners.join(', ') : 'none in CODEOWNERS'}`],
        ...(e.quarantine
          ? [
              [
                `Quarantined by ${e.quarantine.createdBy}: ${e.quarantine.reason}` +
                  (e.quarantine.expiresAt ? ` (until ${e.quarantine.expiresAt.slice(0, 10)})` : ''),
              ],
            ]
          : []),
      ],
    },
  ]
  if (a.evidence.length) {
    blocks.push({ kind: 'heading', text: 'Evidence' })
    blocks.push({ kind: 'bullets', items: a.evidence.slice(0, TICKET_LIST_ITEMS).map((x) => [x.detail]) })
  }
  const modes = a.failureModes.slice(0, TICKET_FAILURE_MODES)
  if (modes.length) {
    blocks.push({ kind: 'heading', text: 'Failure modes' })
    for (const m of modes) {
      blocks.push({
        kind: 'paragraph',
        parts: [
          `${m.count}× ${m.errorType ?? 'failure'}, first ${iso(m.firstSeen)}, last ${iso(m.lastSeen)} (run `,
          { code: m.lastRunId },
          ')',
        ],
      })
      blocks.push({ kind: 'code', text: m.example ?? m.signature })
    }
  }
  if (a.hints.length) {
    blocks.push({ kind: 'heading', text: 'Hints' })
    blocks.push({ kind: 'bullets', items: a.hints.slice(0, TICKET_LIST_ITEMS).map((h) => [h.message]) })
  }
  const failing = e.history.entries
    .filter((x) => x.status === 'failed' || x.status === 'error' || x.flakyOnRetry)
    .slice(-TICKET_RECENT_FAILURES)
    .reverse()
  if (failing.length) {
    blocks.push({ kind: 'heading', text: 'Recent failures' })
    blocks.push({
      kind: 'bullets',
      items: failing.map((x) => [
        `${iso(x.run.at)} `,
        { text: x.run.runId, href: x.run.pipelineUrl ?? x.run.artifactsUrl ?? null },
        `${x.run.branch ? ` on ${x.run.branch}` : ''}${x.flakyOnRetry && x.status === 'passed' ? ' (passed on retry)' : ''}`,
      ]),
    })
  }
  const page = testUrl(links.serverUrl, a.testId, links.project)
  blocks.push({
    kind: 'paragraph',
    parts: [
      ...(page ? [{ text: 'The test on the dashboard', href: page }, '. '] : []),
      'flakewatch comments here when the test fails again and closes this ticket when it is released or fixed.',
    ],
  })
  return blocks
}

/** The comment for a test that failed again: the newest failure mode's run and message. */
export function failedAgainComment(a: TestAnalysis, links: TicketLinks): Block[] {
  const newest = [...a.failureModes].sort((x, y) => y.lastSeen - x.lastSeen)[0]
  const page = testUrl(links.serverUrl, a.testId, links.project)
  const blocks: Block[] = [
    {
      kind: 'paragraph',
      parts: [
        `Failed again${a.lastFailureAt === null ? '' : ` at ${iso(a.lastFailureAt)}`}`,
        ...(newest ? [' (run ', { code: newest.lastRunId }, ')'] : []),
        `: ${a.failures} of the last ${a.runs} runs failed, verdict ${a.verdict}.`,
        ...(page ? [' ', { text: 'Dashboard', href: page }] : []),
      ],
    },
  ]
  if (newest) blocks.push({ kind: 'code', text: newest.example ?? newest.signature })
  return blocks
}

/** The comment that goes with a state change (closed, reopened, quarantined). */
export function stateComment(text: string): Block[] {
  return [{ kind: 'paragraph', parts: [text] }]
}
