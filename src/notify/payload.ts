import { createHmac } from 'node:crypto'
import type { TestAnalysis } from '../analysis/types.js'
import type { TestRef } from '../model.js'
import type { NotificationEvent } from '../store/notifications.js'
import { describeRuleMatch, ruleFieldsJson } from '../quarantine/rules.js'
import type { QuarantineRecord, QuarantineRule, RuleAuditEntry } from '../store/store.js'
import type { StateChange } from './detect.js'
import type { RuleChange } from './detect-rules.js'

/** Everything a message says about one change. */
export interface ChangeContext {
  change: StateChange
  at: string
  test: TestRef | null
  owners: string[]
  analysis: TestAnalysis | null
  quarantine: QuarantineRecord | null
  /** Why a quarantine ended, from the audit trail (released events only). */
  releaseReason: string | null
  serverUrl: string | null
  /** The project on a multi-project server (docs/projects.md); null on a single-project one. */
  project: string | null
}

const SUMMARY: Record<NotificationEvent, string> = {
  became_flaky: 'became flaky',
  became_broken: 'became broken',
  fixed: 'is fixed',
  quarantined: 'was quarantined',
  released: 'was released from quarantine',
  quarantine_expiring: 'has a quarantine about to expire',
  rule_created: 'was created',
  rule_replaced: 'was replaced',
  rule_deleted: 'was deleted',
}

/** The test's dashboard page; on a multi-project server, in its project (the dashboard reads `?project=`). */
export function testUrl(serverUrl: string | null, testId: string, project: string | null = null): string | null {
  if (!serverUrl) return null
  const page = `${serverUrl.replace(/\/+$/, '')}/tests/${encodeURIComponent(testId)}`
  return project === null ? page : `${page}?project=${encodeURIComponent(project)}`
}

/** The fields every payload starts with; the summary leads with the project on a multi-project server. */
function envelope(
  c: { change: { id: string; event: NotificationEvent }; at: string; project: string | null },
  summary: string,
) {
  return {
    version: 1,
    id: c.change.id,
    event: c.change.event,
    at: c.at,
    project: c.project,
    summary: `${c.project === null ? '' : `${c.project}: `}${summary}`,
  }
}

/** flakewatch's own payload, version 1 (docs/notifications.md lists every field). */
export function genericPayload(c: ChangeContext): Record<string, unknown> {
  const a = c.analysis
  const q = c.quarantine
  return {
    ...envelope(c, `${c.change.testId} ${SUMMARY[c.change.event]}`),
    test: {
      id: c.change.testId,
      suite: c.test?.suite ?? null,
      module: c.test?.module ?? null,
      name: c.test?.name ?? null,
      file: c.test?.file ?? null,
      owners: c.owners,
    },
    previous: c.change.previous,
    current: c.change.current,
    analysis: a && {
      verdict: a.verdict,
      reason: a.reason,
      score: a.score,
      pass_rate: a.passRate,
      flip_rate: a.flipRate,
      runs: a.runs,
      failures: a.failures,
      time_lost_ms: a.timeLostMs,
    },
    quarantine: q && {
      reason: q.reason,
      owner: q.owner,
      issue_url: q.issueUrl,
      created_by: q.createdBy,
      expires_at: q.expiresAt,
      source: q.source,
    },
    release_reason: c.releaseReason,
    url: testUrl(c.serverUrl, c.change.testId, c.project),
  }
}

/** Slack's mrkdwn treats these three as markup; test names are untrusted text. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** An incoming-webhook message (`text` for notifications, `blocks` for the channel). */
export function slackPayload(c: ChangeContext): Record<string, unknown> {
  const url = testUrl(c.serverUrl, c.change.testId, c.project)
  const name = slackEscape(c.change.testId)
  // The project leads, so that one channel fed by many repositories says which one changed.
  const where = c.project === null ? '' : `[${slackEscape(c.project)}] `
  const title = `${where}${url ? `<${url}|${name}>` : `\`${name}\``} ${SUMMARY[c.change.event]}`
  const details: string[] = []
  if (c.analysis) {
    const pass = c.analysis.passRate == null ? '–' : `${(c.analysis.passRate * 100).toFixed(1)}%`
    details.push(`verdict *${c.analysis.verdict}* · pass rate ${pass} · ${slackEscape(c.analysis.reason)}`)
  }
  if (c.quarantine) {
    const until = c.quarantine.expiresAt ? ` until ${c.quarantine.expiresAt.slice(0, 10)}` : ''
    details.push(`quarantined${until}: ${slackEscape(c.quarantine.reason)}`)
  }
  if (c.releaseReason) details.push(`released: ${slackEscape(c.releaseReason)}`)
  if (c.owners.length) details.push(`owners: ${slackEscape(c.owners.join(' '))}`)
  return {
    text: `flakewatch: ${where}${name} ${SUMMARY[c.change.event]}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*flakewatch*: ${title}` } },
      ...(details.length ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: details.join('\n') }] }] : []),
    ],
  }
}

export function renderBody(format: 'json' | 'slack', c: ChangeContext): string {
  return JSON.stringify(format === 'slack' ? slackPayload(c) : genericPayload(c))
}

/** Everything a message says about a quarantine rule created, replaced or deleted. */
export interface RuleChangeContext {
  change: RuleChange
  at: string
  /** The rule now, or as it was before its deletion (from its audit trail); null if no trail is left. */
  rule: QuarantineRule | null
  /** The rule's audit line for the change: who, when, why (null for a change the trail does not hold). */
  audit: Pick<RuleAuditEntry, 'action' | 'actor' | 'at' | 'reason'> | null
  serverUrl: string | null
  project: string | null
}

/** The dashboard's quarantine page, where rules are listed. */
function rulesUrl(serverUrl: string | null, project: string | null): string | null {
  if (!serverUrl) return null
  const page = `${serverUrl.replace(/\/+$/, '')}/quarantine`
  return project === null ? page : `${page}?project=${encodeURIComponent(project)}`
}

function ruleSummary(c: RuleChangeContext): string {
  const by = c.audit ? ` by ${c.audit.actor}` : ''
  return `quarantine rule ${c.change.ruleId} ${SUMMARY[c.change.event]}${by}`
}

/** flakewatch's own payload for rule events, version 1 (docs/notifications.md lists every field). */
export function genericRulePayload(c: RuleChangeContext): Record<string, unknown> {
  return {
    ...envelope(c, ruleSummary(c)),
    rule: c.rule && ruleFieldsJson(c.rule),
    deleted: c.change.event === 'rule_deleted',
    actor: c.audit?.actor ?? null,
    reason: c.audit?.reason ?? null,
    url: rulesUrl(c.serverUrl, c.project),
  }
}

/** The Slack form of a rule event: rule ids and patterns are people's text, escaped like test names. */
export function slackRulePayload(c: RuleChangeContext): Record<string, unknown> {
  const url = rulesUrl(c.serverUrl, c.project)
  const where = c.project === null ? '' : `[${slackEscape(c.project)}] `
  const line = slackEscape(ruleSummary(c))
  const details: string[] = []
  if (c.rule) details.push(`matches ${slackEscape(describeRuleMatch(c.rule.match))}`)
  if (c.audit) details.push(`reason: ${slackEscape(c.audit.reason)}`)
  if (c.rule?.expiresAt) details.push(`expires ${c.rule.expiresAt.slice(0, 10)}`)
  return {
    text: `flakewatch: ${where}${line}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*flakewatch*: ${where}${url ? `<${url}|${line}>` : line}` } },
      ...(details.length ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: details.join('\n') }] }] : []),
    ],
  }
}

export function renderRuleBody(format: 'json' | 'slack', c: RuleChangeContext): string {
  return JSON.stringify(format === 'slack' ? slackRulePayload(c) : genericRulePayload(c))
}

export const SIGNATURE_HEADER = 'x-flakewatch-signature-256'
export const TIMESTAMP_HEADER = 'x-flakewatch-timestamp'

/**
 * `sha256=` and the hex HMAC-SHA256 of `<timestamp>.<body>` under the webhook's secret. The timestamp is signed
 * too, so that a receiver can refuse an old message replayed.
 * @example signBody('a-long-shared-secret', '1767225600', '{"event":"fixed"}')
 */
export function signBody(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`
}
