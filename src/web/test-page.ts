import type {
  AttemptsResponse,
  HistoryEntryJson,
  HistoryResponse,
  TestAnalysisJson,
  TestDetailResponse,
} from '../server/api-types.js'
import { get } from './api.js'
import { classChip, evidenceTag, quarantineBadge, statusChip, verdictChip } from './chips.js'
import { extLink, h, replace, safeUrl } from './dom.js'
import { filtersBar } from './filters.js'
import { dateTime, day, duration, envText, fixed, pct, shortRev } from './format.js'
import { loader, onParams, type Page } from './page.js'
import { openQuarantineDialog } from './quarantine-dialog.js'
import { filterQuery, readFilters, selectionParams } from './state.js'
import './test-page.css'

const COMPONENT_LABELS: Record<keyof TestAnalysisJson['components'], string> = {
  intermittency: 'Intermittency',
  rerun_pass_rate: 'Passes on rerun',
  failure_clustering: 'Failure clustering',
  message_variance: 'Message variance',
  fail_success_ratio: 'Fail/success ratio',
  consecutive_failure_penalty: 'Consecutive-failure penalty',
}

const panel = (title: string, ...children: (Node | string | null)[]) => h('section', { class: 'panel pad' }, h('h2', null, title), ...children)

function cellClass(e: HistoryEntryJson): string {
  if (e.status === 'passed') return e.flaky_on_retry ? 'retry' : 'pass'
  return e.status === 'failed' ? 'fail' : e.status === 'error' ? 'error' : 'skip'
}

function historyStrip(testId: string, history: HistoryResponse): Node {
  const detail = h('div', { class: 'attempts' }, h('p', { class: 'muted' }, 'Click a result to see its attempts.'))
  if (history.entries.length === 0) return h('p', { class: 'muted' }, 'No results stored.')
  const strip = h(
    'div',
    { class: 'strip', role: 'list' },
    ...history.entries.map((e) =>
      h('button', {
        type: 'button',
        role: 'listitem',
        class: `hcell ${cellClass(e)}${e.run_status === 'interrupted' ? ' interrupted' : ''}`,
        title: `${dateTime(e.at)} · ${e.status}${e.flaky_on_retry ? ' on retry' : ''} · revision ${shortRev(e.revision)} · ${envText(e.env)}`,
        'aria-label': `${day(e.at)} ${e.status}`,
        on: { click: () => void showAttempts(e) },
      }),
    ),
  )
  async function showAttempts(e: HistoryEntryJson) {
    replace(detail, h('p', { class: 'muted' }, 'Loading attempts…'))
    try {
      const a = await get<AttemptsResponse>(`/tests/${encodeURIComponent(testId)}/runs/${encodeURIComponent(e.run_id)}/attempts`)
      const link = safeUrl(e.artifacts_url) ?? safeUrl(e.pipeline_url)
      replace(
        detail,
        h(
          'div',
          { class: 'attempts-head' },
          h('strong', null, `Run ${e.run_id}`),
          h('span', { class: 'muted' }, ` · ${dateTime(e.at)} · revision ${shortRev(e.revision)} · ${envText(e.env)}`),
          extLink(link, 'artifacts / pipeline ↗'),
        ),
        ...a.attempts.map((t) =>
          h(
            'div',
            { class: 'attempt' },
            h('div', { class: 'attempt-line' }, h('span', { class: 'muted' }, `attempt ${t.retry + 1}`), statusChip(t.status), h('span', { class: 'muted' }, duration(t.duration_ms))),
            t.message ? h('pre', { class: 'message' }, t.message) : null,
            t.stack ? h('details', null, h('summary', null, 'stack'), h('pre', { class: 'message' }, t.stack)) : null,
          ),
        ),
      )
    } catch (err) {
      replace(detail, h('div', { class: 'error-box' }, (err as Error).message))
    }
  }
  return h('div', null, strip, h('div', { class: 'strip-axis muted' }, h('span', null, day(history.entries[0]!.at)), h('span', null, 'newest →')), detail)
}

function scorePanel(a: TestAnalysisJson): Node {
  return panel(
    'Score',
    h(
      'div',
      { class: 'score-head' },
      h('div', { class: 'big' }, fixed(a.score)),
      h('div', { class: 'muted' }, `confidence ${fixed(a.confidence)}`, h('br'), `flip rate ${fixed(a.flip_rate)} · EWMA ${fixed(a.ewma_flip_rate)}`),
    ),
    h(
      'div',
      { class: 'components' },
      ...(Object.keys(COMPONENT_LABELS) as (keyof TestAnalysisJson['components'])[]).map((k) => {
        const bar = h('span', { class: 'fill' })
        bar.style.width = `${Math.round(a.components[k] * 100)}%`
        return h('div', { class: 'component' }, h('span', { class: 'name' }, COMPONENT_LABELS[k]), h('span', { class: 'track' }, bar), h('span', { class: 'num' }, fixed(a.components[k])))
      }),
    ),
  )
}

function verdictPanel(a: TestAnalysisJson): Node {
  return panel(
    'Verdict',
    h('div', { class: 'chips' }, verdictChip(a.verdict), classChip(a.pass_rate_class), h('span', { class: 'muted' }, `flip-rate class: ${a.classification}`)),
    h('p', { class: 'reason' }, a.reason),
    h(
      'div',
      { class: 'facts' },
      h('span', null, h('strong', null, `${a.passes}/${a.runs}`), ' passed'),
      h('span', null, h('strong', null, pct(a.pass_rate)), ' pass rate'),
      h('span', null, h('strong', null, String(a.failures)), ' failures'),
      a.excluded_runs ? h('span', { class: 'muted' }, `${a.excluded_runs} infrastructure-failure runs left out`) : null,
      a.time_lost_ms ? h('span', null, h('strong', null, duration(a.time_lost_ms)), ' CI time lost') : null,
    ),
    a.evidence.length ? h('div', { class: 'evidence-list' }, ...a.evidence.map((e) => h('div', null, evidenceTag(e), h('span', { class: 'detail' }, e.detail)))) : null,
    h('p', { class: 'recommendation' }, h('strong', null, `Recommendation: ${a.recommendation.action}`), ` (${a.recommendation.priority}) — ${a.recommendation.reason}`),
  )
}

function failureModes(a: TestAnalysisJson): Node {
  if (a.failure_modes.length === 0) return panel('Failure modes', h('p', { class: 'muted' }, 'No failures in this selection.'))
  return panel(
    'Failure modes',
    ...a.failure_modes.map((m) =>
      h(
        'div',
        { class: 'mode' },
        h(
          'div',
          { class: 'mode-head' },
          h('strong', null, `${m.count}×`),
          m.error_type ? h('code', null, m.error_type) : null,
          h('span', { class: 'muted' }, `${day(m.first_seen)} → ${day(m.last_seen)}`),
        ),
        h('pre', { class: 'message' }, m.example ?? m.signature),
      ),
    ),
  )
}

function contexts(a: TestAnalysisJson): Node {
  if (a.contexts.length === 0) return panel('Contexts', h('p', { class: 'muted' }, 'No contexts.'))
  return panel(
    'Contexts',
    h(
      'table',
      { class: 'data compact' },
      h('thead', null, h('tr', null, h('th', null, 'Context'), h('th', { class: 'num' }, 'Passes'), h('th', { class: 'num' }, 'Failures'), h('th', { class: 'num' }, 'Pass rate'), h('th', null, 'Class'))),
      h(
        'tbody',
        null,
        ...a.contexts.map((c) =>
          h('tr', null, h('td', { class: 'mono' }, c.context), h('td', { class: 'num' }, c.passes), h('td', { class: 'num' }, c.failures), h('td', { class: 'num' }, pct(c.pass_rate)), h('td', null, classChip(c.pass_rate_class))),
        ),
      ),
    ),
  )
}

function hints(a: TestAnalysisJson): Node {
  return panel('Hints', a.hints.length ? h('ul', { class: 'hints' }, ...a.hints.map((x) => h('li', null, x.message))) : h('p', { class: 'muted' }, 'No root-cause hints.'))
}

function quarantinePanel(d: TestDetailResponse, reload: () => void): Node {
  const q = d.quarantine
  const open = (mode: 'quarantine' | 'release') => openQuarantineDialog({ testId: d.test.test_id, testName: d.test.name, mode, onDone: reload })
  const state = q
    ? h(
        'div',
        { class: 'qstate' },
        h('div', null, q.active ? quarantineBadge() : h('span', { class: 'chip verdict-insufficient_data' }, 'expired')),
        h('p', null, q.reason),
        h('p', { class: 'muted' }, `since ${day(q.created_at)} by ${q.created_by} · ${q.source} · expires ${q.expires_at ? day(q.expires_at) : 'never'}${q.owner ? ` · owner ${q.owner}` : ''}`),
        extLink(q.issue_url, 'tracking issue ↗'),
      )
    : h('p', { class: 'muted' }, 'Not quarantined: its failures fail the build.')
  const button = q
    ? h('button', { type: 'button', class: 'danger', on: { click: () => open('release') } }, 'Release…')
    : h('button', { type: 'button', class: 'primary', on: { click: () => open('quarantine') } }, 'Quarantine…')
  const audit = d.audit.length
    ? h(
        'table',
        { class: 'data compact audit' },
        h('thead', null, h('tr', null, h('th', null, 'When'), h('th', null, 'Action'), h('th', null, 'Who'), h('th', null, 'Reason'))),
        h('tbody', null, ...d.audit.map((x) => h('tr', null, h('td', { class: 'nowrap' }, dateTime(x.at)), h('td', null, x.action), h('td', null, x.actor), h('td', null, x.reason)))),
      )
    : h('p', { class: 'muted' }, 'No quarantine history.')
  return panel('Quarantine', h('div', { class: 'qrow' }, state, button), h('h3', null, 'Audit log'), audit)
}

/** One test: verdict, history strip with attempts on demand, score components, failure modes, contexts, hints, quarantine. */
export function testPage(testId: string): Page {
  return (root) => {
    const body = h('div', { class: 'test-page' })
    root.append(filtersBar(), body)
    const render = ([d, history]: [TestDetailResponse, HistoryResponse]) => {
      const a = d.analysis
      return [
        h('a', { href: `/${filterQuery()}`, class: 'back' }, '← Leaderboard'),
        h(
          'header',
          { class: 'test-header' },
          h('div', null, h('h1', null, d.test.name), h('div', { class: 'muted' }, `${d.test.module} · ${d.test.suite}`), h('code', { class: 'test-id' }, d.test.test_id)),
        ),
        h(
          'div',
          { class: 'test-grid' },
          h(
            'div',
            { class: 'col' },
            a ? verdictPanel(a) : panel('Verdict', h('p', { class: 'muted' }, 'No results of this test in the selected runs.')),
            panel(`History (${history.entries.length} newest results)`, historyStrip(testId, history)),
            a ? failureModes(a) : null,
            a ? hints(a) : null,
          ),
          h('div', { class: 'col' }, quarantinePanel(d, reload), a ? scorePanel(a) : null, a ? contexts(a) : null),
        ),
      ]
    }
    const load = loader(body, render)
    function reload() {
      void load(() =>
        Promise.all([
          get<TestDetailResponse>(`/tests/${encodeURIComponent(testId)}`, selectionParams({ ...readFilters(), q: undefined })),
          get<HistoryResponse>(`/tests/${encodeURIComponent(testId)}/history`, { limit: 200 }),
        ]),
      )
    }
    reload()
    return onParams(reload)
  }
}
