import type { AuditResponse, QuarantineListResponse, RuleListResponse } from '../server/api-types.js'
import { get, testPath } from './api.js'
import { quarantineBadge } from './chips.js'
import { extLink, h } from './dom.js'
import { projectQuery } from './project.js'
import { dateTime, day } from './format.js'
import { loader, type Page } from './page.js'

const headRow = (...labels: string[]) => h('thead', null, h('tr', null, ...labels.map((l) => h('th', null, l))))

function quarantineTable(list: QuarantineListResponse): Node {
  const q = list.quarantined
  if (q.length === 0) return h('div', { class: 'empty' }, 'Nothing is quarantined.')
  return h(
    'table',
    { class: 'data' },
    headRow('Test', 'Reason', 'Owner', 'Source', 'Since', 'Expires'),
    h(
      'tbody',
      null,
      ...q.map((r) =>
        h(
          'tr',
          null,
          h(
            'td',
            null,
            h('a', { href: `${testPath(r.test_id)}${projectQuery()}`, class: 'test-name' }, r.test_id),
            r.active ? quarantineBadge() : h('span', { class: 'chip verdict-insufficient_data' }, 'expired'),
          ),
          h('td', null, r.reason, ' ', extLink(r.issue_url, 'issue ↗')),
          h('td', null, r.owner ?? '–'),
          h('td', null, r.source),
          h('td', { class: 'nowrap' }, day(r.created_at)),
          h('td', { class: 'nowrap' }, r.expires_at ? day(r.expires_at) : 'never'),
        ),
      ),
    ),
  )
}

function rulesTable(list: RuleListResponse): Node {
  if (list.rules.length === 0) return h('div', { class: 'empty' }, 'No quarantine rules.')
  return h(
    'table',
    { class: 'data' },
    headRow('Rule', 'Matches', 'Reason', 'Owner', 'Expires'),
    h(
      'tbody',
      null,
      ...list.rules.map((r) =>
        h(
          'tr',
          { dataset: { rule: r.id } },
          h(
            'td',
            null,
            h('code', null, r.id),
            r.active ? quarantineBadge() : h('span', { class: 'chip verdict-insufficient_data' }, 'expired'),
          ),
          h('td', null, h('code', null, r.matches)),
          h('td', null, r.reason, ' ', extLink(r.issue_url, 'issue ↗')),
          h('td', null, r.owner ?? '–'),
          h('td', { class: 'nowrap' }, r.expires_at ? day(r.expires_at) : 'never'),
        ),
      ),
    ),
  )
}

function auditTable(audit: AuditResponse): Node {
  if (audit.audit.length === 0) return h('div', { class: 'empty' }, 'No quarantine changes yet.')
  return h(
    'table',
    { class: 'data compact' },
    headRow('When', 'Action', 'Test', 'Who', 'Reason'),
    h(
      'tbody',
      null,
      ...audit.audit.map((a) =>
        h(
          'tr',
          null,
          h('td', { class: 'nowrap' }, dateTime(a.at)),
          h('td', null, a.action),
          h('td', null, h('a', { href: `${testPath(a.test_id)}${projectQuery()}` }, a.test_id)),
          h('td', null, a.actor),
          h('td', null, a.reason),
        ),
      ),
    ),
  )
}

function render([list, rules, audit]: [QuarantineListResponse, RuleListResponse, AuditResponse]): Node[] {
  const title = (text: string) => h('div', { class: 'panel-title' }, h('h2', null, text))
  return [
    h('section', { class: 'panel' }, title(`Quarantined tests (${list.quarantined.length})`), quarantineTable(list)),
    h('section', { class: 'panel' }, title(`Quarantine rules (${rules.rules.length})`), rulesTable(rules)),
    h('section', { class: 'panel' }, title('Audit log'), auditTable(audit)),
  ]
}

/** Every quarantine and the audit trail. */
export const quarantinePage: Page = (root) => {
  const body = h('div', { class: 'grid' })
  root.append(body)
  void loader(
    body,
    render,
  )(() =>
    Promise.all([
      get<QuarantineListResponse>('/quarantine'),
      get<RuleListResponse>('/rules'),
      get<AuditResponse>('/quarantine/audit', { limit: 100 }),
    ]),
  )
}
