import type { ClassifiedFailure, FailureKind } from './classify.js'

/** GitHub refuses comments over 65,536 characters; GitLab allows more, but nobody reads that far. */
export const COMMENT_MAX_CHARS = 60_000
/** Failures listed per section; the rest are counted. */
export const COMMENT_MAX_ROWS = 50

/** The hidden marker that finds the comment again on the next run. `key` tells several jobs' comments apart. */
export function commentMarker(key = 'default'): string {
  return `<!-- flakewatch:pr-comment key=${key.replace(/[^A-Za-z0-9_.:/-]/g, '_')} -->`
}

/**
 * Makes untrusted text (a test name, a failure message) inert in GitHub/GitLab Markdown: no formatting, no HTML,
 * no links, no @mentions or #references, on one line.
 * @example escapeMarkdown('<b>*x*</b> @team') // '&lt;b&gt;\\*x\\*&lt;/b&gt; @\u200bteam'
 */
export function escapeMarkdown(text: string, max = 300): string {
  // eslint-disable-next-line no-control-regex
  const one = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim()
  const cut = one.length > max ? `${one.slice(0, max)}…` : one
  return (
    cut
      .replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!)
      .replace(/[\\`*_{}[\]()#+\-.!|~]/g, '\\$&')
      // No autolinks: `https://…` in a test name must stay text.
      .replace(/:(?=\/\/)/g, '\\:')
      .replace(/@(?=\w)/g, '@\u200b')
  )
}

export interface RenderCommentOptions {
  key?: string
  /** The dashboard's base URL: each test links to its page. */
  serverUrl?: string | null
  /** What ran: a suite name, a job name. */
  title?: string
  totals?: { tests: number; failed: number }
  /** Where the run is, e.g. the CI job URL. */
  runUrl?: string | null
}

const SECTIONS: { kind: FailureKind; title: string; lead: string }[] = [
  {
    kind: 'new_failure',
    title: '❌ New failures',
    lead: 'Not seen failing before: most likely caused by this change.',
  },
  { kind: 'broken', title: '🔴 Broken before this change', lead: 'Already failing on the default branch.' },
  { kind: 'known_flaky', title: '🟡 Known flaky', lead: 'Failures of tests flakewatch knows to be flaky.' },
  { kind: 'passed_on_retry', title: '🔁 Passed on retry', lead: 'Failed first, then passed: possibly flaky.' },
]

/** An http(s) URL, normalised, or null: a link from input never becomes `javascript:` or the like. */
export function safeUrl(url: string | null | undefined): string | null {
  if (!url) return null
  try {
    const u = new URL(url)
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href.replace(/\/+$/, '') : null
  } catch {
    return null
  }
}

function testLink(f: ClassifiedFailure, serverUrl: string | null): string {
  const name = escapeMarkdown(f.testId)
  return serverUrl ? `[${name}](${serverUrl}/tests/${encodeURIComponent(f.testId)})` : name
}

/** A revision in a code span when it is a plain sha or ref (a code span shows escapes literally), else escaped. */
const revision = (rev: string) => (/^[0-9A-Za-z._/-]{1,64}$/.test(rev) ? `\`${rev}\`` : escapeMarkdown(rev, 64))

function detail(f: ClassifiedFailure): string {
  const parts: string[] = []
  if (f.kind === 'broken') parts.push(f.brokenSince ? `broken since ${revision(f.brokenSince)}` : 'broken')
  if (f.quarantine) {
    const q = f.quarantine
    parts.push(
      `quarantined${q.rule ? ` by rule ${escapeMarkdown(q.rule, 64)}` : ''}: ${escapeMarkdown(q.reason, 120)}${q.owner ? `, owner ${escapeMarkdown(q.owner, 80)}` : ''}` +
        (q.expiresAt ? `, until ${q.expiresAt.slice(0, 10)}` : ''),
    )
  } else if (f.kind === 'known_flaky') parts.push('not quarantined')
  for (const e of f.evidence.slice(0, 2)) parts.push(escapeMarkdown(e.detail, 160))
  if (f.message && f.kind !== 'passed_on_retry') parts.push(escapeMarkdown(f.message.split('\n')[0] ?? '', 160))
  return parts.join(' · ')
}

/**
 * The pull-request comment: a hidden marker, a one-line summary, then one section per kind of failure. Untrusted
 * text is escaped; the body stays under {@link COMMENT_MAX_CHARS}.
 * @example renderComment(classifyFailures(input), { serverUrl: 'https://flakewatch.example.com' })
 */
export function renderComment(failures: ClassifiedFailure[], opts: RenderCommentOptions = {}): string {
  const serverUrl = safeUrl(opts.serverUrl)
  const count = (k: FailureKind) => failures.filter((f) => f.kind === k).length
  const head = [commentMarker(opts.key), `### flakewatch${opts.title ? `: ${escapeMarkdown(opts.title, 80)}` : ''}`, '']
  const summary = [
    opts.totals ? `${opts.totals.tests} tests, ${opts.totals.failed} failed` : null,
    `${count('new_failure')} new`,
    `${count('broken')} broken before`,
    `${count('known_flaky')} known flaky`,
    `${count('passed_on_retry')} passed on retry`,
  ].filter(Boolean)
  head.push(summary.join(' · '))
  const runUrl = safeUrl(opts.runUrl)
  if (runUrl) head.push('', `[CI run](${runUrl})`)
  if (!failures.length) head.push('', '✅ No failures.')
  const body: string[] = []
  for (const s of SECTIONS) {
    const items = failures.filter((f) => f.kind === s.kind)
    if (!items.length) continue
    body.push('', `#### ${s.title} (${items.length})`, s.lead, '')
    for (const f of items.slice(0, COMMENT_MAX_ROWS)) {
      const d = detail(f)
      body.push(`- ${testLink(f, serverUrl)}${d ? ` — ${d}` : ''}`)
    }
    if (items.length > COMMENT_MAX_ROWS) body.push(`- … and ${items.length - COMMENT_MAX_ROWS} more`)
  }
  let text = [...head, ...body].join('\n')
  if (text.length > COMMENT_MAX_CHARS)
    text = `${text.slice(0, COMMENT_MAX_CHARS)}\n\n… (cut at ${COMMENT_MAX_CHARS} characters)`
  return `${text}\n`
}
