import type { AuditResponse, QuarantineListResponse } from '../server/api-types.js'
import { get, testPath } from './api.js'
import { quarantineBadge } from './chips.js'
import { extLink, h } from './dom.js'
import { dateTime, day } from './format.js'
import { loader, type Page } from './page.js'

function render([list, audit]: [QuarantineListResponse, AuditResponse]): Node[] {
  const q = list.quarantined
  return [
    h(
      'section',
      { class: 'panel' },
      h('div', { class: 'panel-title' }, h('h2', null, `Quarantined tests (${q.length})`)),
      q.length === 0
        ? h('div', { class: 'empty' }, 'Nothing is quarantined.')
        : h(
            'table',
            { class: 'data' },
            h('thead', null, h('tr', null, h('th', null, 'Test'), h('th', null, 'Reason'), h('th', null, 'Owner'), h('th', null, 'Source'), h('th', null, 'Since'), h('th', null, 'Expires'))),
            h(
              'tbody',
              null,
              ...q.map((r) =>
                h(
                  'tr',
                  null,
                  h('td', null, h('a', { href: testPath(r.test_id), class: 'test-name' }, r.test_id), r.active ? quarantineBadge() : h('span', { class: 'chip verdict-insufficient_data' }, 'expired')),
                  h('td', null, r.reason, ' ', extLink(r.issue_url, 'issue ↗')),
                  h('td', null, r.owner ?? '–'),
                  h('td', null, r.source),
                  h('td', { class: 'nowrap' }, day(r.created_at)),
                  h('td', { class: 'nowrap' }, r.expires_at ? day(r.expires_at) : 'never'),
                ),
              ),
            ),
          ),
    ),
    h(
      'section',
      { class: 'panel' },
      h('div', { class: 'panel-title' }, h('h2', null, 'Audit log')),
      audit.audit.length === 0
        ? h('div', { class: 'empty' }, 'No quarantine changes yet.')
        : h(
            'table',
            { class: 'data compact' },
            h('thead', null, h('tr', null, h('th', null, 'When'), h('th', null, 'Action'), h('th', null, 'Test'), h('th', null, 'Who'), h('th', null, 'Reason'))),
            h(
              'tbody',
              null,
              ...audit.audit.map((a) =>
                h('tr', null, h('td', { class: 'nowrap' }, dateTime(a.at)), h('td', null, a.action), h('td', null, h('a', { href: testPath(a.test_id) }, a.test_id)), h('td', null, a.actor), h('td', null, a.reason)),
              ),
            ),
          ),
    ),
  ]
}

/** Every quarantine and the audit trail. */
export const quarantinePage: Page = (root) => {
  const body = h('div', { class: 'grid' })
  root.append(body)
  void loader(body, render)(() => Promise.all([get<QuarantineListResponse>('/quarantine'), get<AuditResponse>('/quarantine/audit', { limit: 100 })]))
}
