import type { OverviewResponse } from '../server/api-types.js'
import { ApiError, getAs, testPath, tokens } from './api.js'
import { h } from './dom.js'
import { duration, fixed, pct } from './format.js'
import { errorView, loader, tokenForm, type Page } from './page.js'
import { inProject } from './project.js'
import './overview.css'

function topFlaky(project: string, top: OverviewResponse['projects'][number]['top_flaky']): Node {
  if (top.length === 0) return h('span', { class: 'muted' }, 'none')
  return h(
    'ol',
    { class: 'top-flaky' },
    ...top.map((t) =>
      h(
        'li',
        null,
        h('a', { href: inProject(testPath(t.test_id), project), class: 'test-name' }, t.test_id),
        h(
          'span',
          { class: 'muted' },
          ` score ${fixed(t.score)} · pass rate ${pct(t.pass_rate)} · lost ${duration(t.time_lost_ms)}`,
        ),
      ),
    ),
  )
}

function table(d: OverviewResponse): Node {
  if (d.projects.length === 0) return h('div', { class: 'panel empty' }, 'No projects.')
  // Each cell names its column: under 600 px the table is a list of cards (table.stack), one per project.
  const num = (label: string, v: number | string) => h('td', { class: 'num', dataset: { label } }, v)
  return h(
    'div',
    { class: 'panel table-wrap' },
    h(
      'table',
      { class: 'data overview stack' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', null, 'Project'),
          ...['Tests', 'Flaky', 'Broken', 'Quarantined', 'CI time lost'].map((l) => h('th', { class: 'num' }, l)),
          h('th', null, 'Top flaky tests'),
        ),
      ),
      h(
        'tbody',
        null,
        ...d.projects.map((p) =>
          h(
            'tr',
            { dataset: { project: p.project } },
            h(
              'td',
              { dataset: { label: 'Project' } },
              h('a', { href: inProject('/', p.project), class: 'project-name' }, p.project),
            ),
            num('Tests', p.tests),
            num('Flaky', p.flaky),
            num('Broken', p.broken),
            num('Quarantined', p.quarantined),
            num('CI time lost', duration(p.ci_time_lost_ms)),
            h('td', { dataset: { label: 'Top flaky tests' } }, topFlaky(p.project, p.top_flaky)),
          ),
        ),
      ),
    ),
  )
}

/** The overview is the organisation token's: a refusal asks for that token, not for a project's read token. */
function overviewError(error: unknown): HTMLElement {
  if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
    return tokenForm(`The overview needs the organisation token. ${error.message}`, 'organisation token', tokens.setOrg)
  }
  return errorView(error)
}

/**
 * The organisation overview of a multi-project server: per project, its flaky and broken tests, quarantines, the
 * CI time lost to failed attempts and its flakiest tests, most time lost first. It needs the organisation token.
 */
export const overviewPage: Page = (root) => {
  const body = h('div', { class: 'overview-body' })
  root.append(h('h1', null, 'Organisation overview'), body)
  void loader<OverviewResponse>(body, table, overviewError)(() => getAs<OverviewResponse>('/overview', tokens.org()))
}
