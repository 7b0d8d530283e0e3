import type { PolicyPreviewResponse, PolicyResponse } from '../server/api-types.js'
import { ApiError, get, post, testPath } from './api.js'
import { verdictChip } from './chips.js'
import { h, replace } from './dom.js'
import { projectQuery } from './project.js'
import { errorView, loader, type Page } from './page.js'
import './settings-page.css'

const headRow = (...labels: string[]) => h('thead', null, h('tr', null, ...labels.map((l) => h('th', null, l))))

/** A cell that names its column: under 600 px the tables are cards (`table.stack`), each value under its name. */
const cell = (label: string, cls: string | null, ...children: (Node | string)[]) =>
  h('td', { class: cls ?? undefined, dataset: { label } }, ...children)

function policyTable(p: PolicyResponse): Node {
  return h(
    'table',
    { class: 'data settings stack' },
    headRow('Setting', 'Value'),
    h(
      'tbody',
      null,
      ...p.settings.map((s) =>
        h('tr', null, cell('Setting', null, h('code', null, s.key)), cell('Value', null, JSON.stringify(s.value))),
      ),
    ),
  )
}

const arrow = (a: string, b: string) => (a === b ? a : `${a} → ${b}`)

function previewView(p: PolicyPreviewResponse): Node[] {
  const t = p.totals
  const summary = h(
    'p',
    { class: 'preview-summary' },
    `${p.changes.length} of ${p.tests} tests would change: ${t.verdict_changed} verdict(s), ${t.would_quarantine} more quarantined, ` +
      `${t.would_no_longer_quarantine} fewer quarantined, ${t.would_release} more released, ${t.would_no_longer_release} fewer released.`,
  )
  const settings =
    p.settings.length === 0
      ? h('div', { class: 'empty' }, 'The candidate changes no setting.')
      : h(
          'table',
          { class: 'data settings stack' },
          headRow('Setting', 'Now', 'Candidate'),
          h(
            'tbody',
            null,
            ...p.settings.map((s) =>
              h(
                'tr',
                null,
                cell('Setting', null, h('code', null, s.key)),
                cell('Now', null, JSON.stringify(s.current)),
                cell('Candidate', null, JSON.stringify(s.candidate)),
              ),
            ),
          ),
        )
  const changes =
    p.changes.length === 0
      ? h('div', { class: 'empty' }, 'No test would change.')
      : h(
          'table',
          { class: 'data preview-changes stack' },
          headRow('Test', 'Verdict', 'Quarantine', 'Why'),
          h(
            'tbody',
            null,
            ...p.changes.map((c) =>
              h(
                'tr',
                { dataset: { test: c.test_id } },
                cell(
                  'Test',
                  null,
                  h('a', { href: `${testPath(c.test_id)}${projectQuery()}`, class: 'test-name' }, c.test_id),
                ),
                c.current.verdict === c.candidate.verdict
                  ? cell('Verdict', 'nowrap', verdictChip(c.current.verdict))
                  : cell('Verdict', 'nowrap', verdictChip(c.current.verdict), ' → ', verdictChip(c.candidate.verdict)),
                cell('Quarantine', 'nowrap', arrow(c.current.action, c.candidate.action)),
                cell('Why', null, ...c.why.map((w) => h('div', null, w))),
              ),
            ),
          ),
        )
  return [summary, settings, changes]
}

const EXAMPLE = `{
  "quarantine": { "minScore": 0.5, "releaseAfterPasses": 5 }
}`

/**
 * `/settings`: the detection and quarantine policy in force, and a preview of a candidate (read-only: nothing is
 * saved; the candidate goes into flakewatch.config.json by a reviewed change).
 */
export const settingsPage: Page = (root) => {
  const title = (text: string) => h('div', { class: 'panel-title' }, h('h2', null, text))
  const current = h('div')
  const result = h('div', { class: 'preview-result', 'aria-live': 'polite' })
  const input = h('textarea', { name: 'candidate', rows: 8, 'aria-label': 'candidate policy (JSON)' })
  input.spellcheck = false
  input.value = EXAMPLE
  const button = h('button', { type: 'submit', class: 'primary' }, 'Preview')
  const form = h(
    'form',
    {
      class: 'preview-form',
      on: {
        submit: (e) => {
          e.preventDefault()
          let candidate: unknown
          try {
            candidate = JSON.parse(input.value)
          } catch (error) {
            replace(result, h('div', { class: 'error-box', role: 'alert' }, `Not JSON: ${(error as Error).message}`))
            return
          }
          button.disabled = true
          replace(result, h('div', { class: 'loading' }, 'Analysing under both policies…'))
          post<PolicyPreviewResponse>('/policy/preview', candidate)
            .then((p) => replace(result, ...previewView(p)))
            .catch((error: unknown) =>
              replace(
                result,
                error instanceof ApiError && error.status !== 401
                  ? h('div', { class: 'error-box', role: 'alert' }, error.message)
                  : errorView(error),
              ),
            )
            .finally(() => (button.disabled = false))
        },
      },
    },
    h(
      'p',
      null,
      'A candidate has the keys of flakewatch.config.json that make the policy: analysis, quarantine and successRate. ',
      'The preview shows which tests would change verdict, be quarantined or released, and why. Nothing is saved.',
    ),
    input,
    h('div', { class: 'row' }, button),
  )
  root.append(
    h('section', { class: 'panel' }, title('Preview a policy'), form, result),
    h('section', { class: 'panel' }, title('Policy in force'), current),
  )
  void loader<PolicyResponse>(current, policyTable)(() => get<PolicyResponse>('/policy'))
}
