import type {
  AttemptsResponse,
  HistoryEntryJson,
  HistoryResponse,
  TestAnalysisJson,
  TestDetailResponse,
} from '../server/api-types.js'
import { FLIP_RATE_CLASS_LABEL, PASS_RATE_CLASS_LABEL, testStory, type TestStory } from '../test-story.js'
import { get } from './api.js'
import { classChip, evidenceTag, quarantineBadge, statusChip, verdictChip } from './chips.js'
import { extLink, h, replace, type Child } from './dom.js'
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

const panel = (title: string, ...children: Child[]) =>
  h('section', { class: 'panel pad' }, h('h2', null, title), ...children)

const muted = (text: string) => h('p', { class: 'muted' }, text)

const headRow = (...cells: (string | [string, string])[]) =>
  h(
    'thead',
    null,
    h('tr', null, ...cells.map((c) => (typeof c === 'string' ? h('th', null, c) : h('th', { class: c[1] }, c[0])))),
  )

const expiredChip = () => h('span', { class: 'chip verdict-insufficient_data' }, 'expired')

function cellClass(e: HistoryEntryJson): string {
  if (e.status === 'passed') return e.flaky_on_retry ? 'retry' : 'pass'
  return e.status === 'failed' ? 'fail' : e.status === 'error' ? 'error' : 'skip'
}

function entryTitle(e: HistoryEntryJson): string {
  const status = `${e.status}${e.flaky_on_retry ? ' on retry' : ''}`
  return `${dateTime(e.at)} · ${status} · revision ${shortRev(e.revision)} · ${envText(e.env)}`
}

function historyStrip(testId: string, history: HistoryResponse): Node {
  const detail = h('div', { class: 'attempts' }, muted('Click a result to see its attempts.'))
  if (history.entries.length === 0) return muted('No results stored.')
  const strip = h(
    'div',
    { class: 'strip', role: 'list' },
    ...history.entries.map((e) =>
      h('button', {
        type: 'button',
        role: 'listitem',
        class: `hcell ${cellClass(e)}${e.run_status === 'interrupted' ? ' interrupted' : ''}`,
        title: entryTitle(e),
        'aria-label': `${day(e.at)} ${e.status}`,
        on: { click: () => void showAttempts(e) },
      }),
    ),
  )
  async function showAttempts(e: HistoryEntryJson) {
    replace(detail, muted('Loading attempts…'))
    try {
      const path = `/tests/${encodeURIComponent(testId)}/runs/${encodeURIComponent(e.run_id)}/attempts`
      const a = await get<AttemptsResponse>(path)
      replace(
        detail,
        h(
          'div',
          { class: 'attempts-head' },
          h('strong', null, `Run ${e.run_id}`),
          h('span', { class: 'muted' }, ` · ${dateTime(e.at)} · revision ${shortRev(e.revision)} · ${envText(e.env)}`),
          extLink(e.artifacts_url, 'artifacts ↗') ?? extLink(e.pipeline_url, 'pipeline ↗'),
        ),
        ...a.attempts.map((t) =>
          h(
            'div',
            { class: 'attempt' },
            h(
              'div',
              { class: 'attempt-line' },
              h('span', { class: 'muted' }, `attempt ${t.retry + 1}`),
              statusChip(t.status),
              h('span', { class: 'muted' }, duration(t.duration_ms)),
            ),
            t.message ? h('pre', { class: 'message' }, t.message) : null,
            t.stack ? h('details', null, h('summary', null, 'stack'), h('pre', { class: 'message' }, t.stack)) : null,
          ),
        ),
      )
    } catch (err) {
      replace(detail, h('div', { class: 'error-box' }, (err as Error).message))
    }
  }
  const axis = h(
    'div',
    { class: 'strip-axis muted' },
    h('span', null, day(history.entries[0]!.at)),
    h('span', null, 'newest →'),
  )
  return h('div', null, strip, axis, detail)
}

function scorePanel(a: TestAnalysisJson, story: TestStory): Node {
  const keys = Object.keys(COMPONENT_LABELS) as (keyof TestAnalysisJson['components'])[]
  return panel(
    'Score',
    h(
      'div',
      { class: 'score-head' },
      h('div', { class: 'big' }, fixed(a.score)),
      h(
        'div',
        { class: 'muted' },
        story.scoreNote,
        h('br'),
        `flip rate ${fixed(a.flip_rate)} · EWMA ${fixed(a.ewma_flip_rate)}`,
      ),
    ),
    h(
      'div',
      { class: 'components' },
      ...keys.map((k) => {
        const bar = h('span', { class: 'fill' })
        bar.style.width = `${Math.round(a.components[k] * 100)}%`
        return h(
          'div',
          { class: 'component' },
          h('span', { class: 'name' }, COMPONENT_LABELS[k]),
          h('span', { class: 'track' }, bar),
          h('span', { class: 'num' }, fixed(a.components[k])),
        )
      }),
    ),
  )
}

function verdictPanel(a: TestAnalysisJson, story: TestStory): Node {
  return panel(
    'Verdict',
    // One word for the verdict; the classes are measures, shown with the note that reconciles them.
    h('div', { class: 'chips' }, verdictChip(a.verdict)),
    h('p', { class: 'reason' }, a.reason),
    h(
      'p',
      { class: 'recommendation' },
      h('strong', null, `Recommendation: ${story.action}`),
      ` (priority ${story.strength}) — ${story.grounds}`,
    ),
    h(
      'div',
      { class: 'facts' },
      h('span', null, story.outcomes),
      a.excluded_runs ? h('span', { class: 'muted' }, `${a.excluded_runs} infrastructure-failure runs left out`) : null,
      a.time_lost_ms ? h('span', null, h('strong', null, duration(a.time_lost_ms)), ' CI time lost') : null,
    ),
    h(
      'p',
      { class: 'muted measures' },
      `pass rate ${pct(a.pass_rate)} (pass-rate class ${PASS_RATE_CLASS_LABEL[a.pass_rate_class]}) · flip-rate class ${FLIP_RATE_CLASS_LABEL[a.flip_rate_class]}`,
      story.measuresNote ? ` — ${story.measuresNote}` : '',
    ),
    a.evidence.length
      ? h(
          'div',
          { class: 'evidence-list' },
          ...a.evidence.map((e) => h('div', null, evidenceTag(e), h('span', { class: 'detail' }, e.detail))),
        )
      : null,
  )
}

function failureModes(a: TestAnalysisJson, story: TestStory): Node {
  if (a.failure_modes.length === 0) return panel('Failure modes', muted('No failures in this selection.'))
  const { title, note, unit } = story.failureModes
  return panel(
    title,
    note ? muted(note) : null,
    ...a.failure_modes.map((m) =>
      h(
        'div',
        { class: 'mode' },
        h(
          'div',
          { class: 'mode-head' },
          h('strong', { title: `${m.count} ${unit}` }, `${m.count}×`),
          m.error_type ? h('code', null, m.error_type) : null,
          h('span', { class: 'muted' }, `${day(m.first_seen)} → ${day(m.last_seen)}`),
        ),
        h('pre', { class: 'message' }, m.example ?? m.signature),
      ),
    ),
  )
}

function contexts(a: TestAnalysisJson): Node {
  if (a.contexts.length === 0) return panel('Contexts', muted('No contexts.'))
  const num = (v: string | number) => h('td', { class: 'num' }, v)
  return panel(
    'Contexts',
    h(
      'table',
      { class: 'data compact' },
      headRow('Context', ['Passes', 'num'], ['Failures', 'num'], ['Pass rate', 'num'], 'Class'),
      h(
        'tbody',
        null,
        ...a.contexts.map((c) =>
          h(
            'tr',
            null,
            h('td', { class: 'mono' }, c.context),
            num(c.passes),
            num(c.failures),
            num(pct(c.pass_rate)),
            h('td', null, classChip(c.pass_rate_class)),
          ),
        ),
      ),
    ),
  )
}

function hints(a: TestAnalysisJson): Node {
  if (a.hints.length === 0) return panel('Hints', muted('No root-cause hints.'))
  return panel('Hints', h('ul', { class: 'hints' }, ...a.hints.map((x) => h('li', null, x.message))))
}

function quarantinePanel(d: TestDetailResponse, reload: () => void): Node {
  const q = d.quarantine
  const open = (mode: 'quarantine' | 'release') =>
    openQuarantineDialog({ testId: d.test.test_id, testName: d.test.name, mode, onDone: reload })
  const state = q
    ? h(
        'div',
        { class: 'qstate' },
        h('div', null, q.active ? quarantineBadge() : expiredChip()),
        h('p', null, q.reason),
        h(
          'p',
          { class: 'muted' },
          `since ${day(q.created_at)} by ${q.created_by} · ${q.source}`,
          ` · expires ${q.expires_at ? day(q.expires_at) : 'never'}`,
          q.owner ? ` · owner ${q.owner}` : null,
        ),
        extLink(q.issue_url, 'tracking issue ↗'),
      )
    : muted('Not quarantined: its failures fail the build.')
  const button = q
    ? h('button', { type: 'button', class: 'danger', on: { click: () => open('release') } }, 'Release…')
    : h('button', { type: 'button', class: 'primary', on: { click: () => open('quarantine') } }, 'Quarantine…')
  const audit = d.audit.length
    ? h(
        'table',
        { class: 'data compact audit' },
        headRow('When', 'Action', 'Who', 'Reason'),
        h(
          'tbody',
          null,
          ...d.audit.map((x) =>
            h(
              'tr',
              null,
              h('td', { class: 'nowrap' }, dateTime(x.at)),
              h('td', null, x.action),
              h('td', null, x.actor),
              h('td', null, x.reason),
            ),
          ),
        ),
      )
    : muted('No quarantine history.')
  return panel('Quarantine', h('div', { class: 'qrow' }, state, button), h('h3', null, 'Audit log'), audit)
}

/** One test: verdict, history with attempts on demand, score components, failure modes, contexts, hints, quarantine. */
export function testPage(testId: string): Page {
  return (root) => {
    const body = h('div', { class: 'test-page' })
    root.append(filtersBar(), body)
    const render = ([d, history]: [TestDetailResponse, HistoryResponse]) => {
      const a = d.analysis
      const story = a ? testStory(a) : null
      return [
        h('a', { href: `/${filterQuery()}`, class: 'back' }, '← Leaderboard'),
        h(
          'header',
          { class: 'test-header' },
          h(
            'div',
            null,
            h('h1', null, d.test.name),
            h('div', { class: 'muted' }, `${d.test.module} · ${d.test.suite}`),
            h('code', { class: 'test-id' }, d.test.test_id),
          ),
        ),
        h(
          'div',
          { class: 'test-grid' },
          h(
            'div',
            { class: 'col' },
            a && story
              ? verdictPanel(a, story)
              : panel('Verdict', muted('No results of this test in the selected runs.')),
            panel(`History (${history.entries.length} newest results)`, historyStrip(testId, history)),
            a && story ? failureModes(a, story) : null,
            a ? hints(a) : null,
          ),
          h(
            'div',
            { class: 'col' },
            quarantinePanel(d, reload),
            a && story ? scorePanel(a, story) : null,
            a ? contexts(a) : null,
          ),
        ),
      ]
    }
    const load = loader(body, render)
    const path = `/tests/${encodeURIComponent(testId)}`
    function reload() {
      // The analysis follows the filters' run selection; the history strip is always the newest results.
      const selection = selectionParams({ ...readFilters(), q: undefined })
      void load(() =>
        Promise.all([
          get<TestDetailResponse>(path, selection),
          get<HistoryResponse>(`${path}/history`, { limit: 200 }),
        ]),
      )
    }
    reload()
    return onParams(reload)
  }
}
