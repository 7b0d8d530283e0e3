import type { LeaderboardRow } from '../server/api-types.js'
import { PASS_RATE_CLASS_LABEL, VERDICT_LABEL } from '../test-story.js'
import { h } from './dom.js'
import './chips.css'

const EVIDENCE_LABEL: Record<string, string> = {
  same_revision_pass_and_fail: 'pass + fail, same revision',
  pass_on_retry: 'passed on retry',
  consecutive_failures: 'failing streak',
  high_flip_rate: 'flips often',
  high_score: 'high score',
  healing: 'locator healed',
  runner_association: 'one runner',
}

/** GitLabViz's pass-rate class. */
export const classChip = (c: LeaderboardRow['pass_rate_class']) =>
  h('span', { class: `chip class-${c}` }, PASS_RATE_CLASS_LABEL[c])

/** flakewatch's verdict. */
export const verdictChip = (v: LeaderboardRow['verdict']) => h('span', { class: `chip verdict-${v}` }, VERDICT_LABEL[v])

export const statusChip = (s: string | null) =>
  s ? h('span', { class: `chip status-${s}` }, s === 'error' ? 'error' : s) : h('span', { class: 'muted' }, '–')

export const evidenceTag = (e: { kind: string; detail: string }) =>
  h('span', { class: `tag evidence-${e.kind}`, title: e.detail }, EVIDENCE_LABEL[e.kind] ?? e.kind.replace(/_/g, ' '))

export const quarantineBadge = () =>
  h('span', { class: 'chip quarantined', title: 'quarantined: its failures do not fail the build' }, 'quarantined')
