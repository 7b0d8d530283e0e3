import { readPolicyCandidate } from '../../config/policy-candidate.js'
import { InputError } from '../../errors.js'
import { policyPreviewToJson, previewPolicy, type PolicyPreview } from '../../pipeline/policy-preview.js'
import { createPainter, paintVerdict } from '../color.js'
import { emit, emitJson, renderMarkdownTable, renderTable, useColor, type Io } from '../output.js'
import { parseAsOf, parseSince, type AnalyzeCommandOptions } from './analyze.js'
import { withStore } from '../with-store.js'

/** `analyze --policy <candidate.json> --diff`: what the candidate would change, read-only. */
export async function policyDiff(opts: AnalyzeCommandOptions, io: Io): Promise<PolicyPreview> {
  if (!opts.policy) throw new InputError('--diff compares against a candidate: give --policy <candidate.json>')
  const candidate = readPolicyCandidate(opts.policy)
  const asOf = parseAsOf(opts.asOf)
  const since = parseSince(opts.since)
  return withStore(
    opts,
    io,
    (store, config) =>
      previewPolicy(store, config, candidate, { asOf, filter: { suite: opts.suite, branch: opts.branch, since } }),
    'read',
  )
}

const arrow = (a: string, b: string) => (a === b ? a : `${a} → ${b}`)

export function printPolicyDiff(p: PolicyPreview, opts: AnalyzeCommandOptions, io: Io): void {
  if (opts.json || opts.format === 'json') return emitJson(io, policyPreviewToJson(p), opts.output)
  const md = opts.format === 'markdown'
  const lines: string[] = []
  const t = p.totals
  lines.push(
    `${p.changes.length} of ${p.tests} tests would change: ${t.verdictChanged} verdict(s), ` +
      `${t.wouldQuarantine} more quarantined, ${t.wouldNoLongerQuarantine} fewer quarantined, ` +
      `${t.wouldRelease} more released, ${t.wouldNoLongerRelease} fewer released`,
  )
  lines.push('')
  if (p.settings.length === 0) lines.push('the candidate changes no setting')
  else {
    const rows = p.settings.map((s) => [s.key, JSON.stringify(s.current), JSON.stringify(s.candidate)])
    const head = ['setting', 'current', 'candidate']
    lines.push(md ? renderMarkdownTable(head, rows) : renderTable(head, rows))
  }
  if (p.changes.length) {
    lines.push('')
    const head = ['test', 'verdict', 'quarantine', 'why']
    const rows = p.changes.map((c) => [
      c.testId,
      arrow(c.current.verdict, c.candidate.verdict),
      arrow(c.current.action, c.candidate.action),
      c.why.join('; '),
    ])
    lines.push(md ? renderMarkdownTable(head, rows) : renderTable(head, rows, { maxWidth: 100 }))
  }
  const paint = createPainter(!md && useColor(io, opts.output))
  emit(io, lines.join('\n'), opts.output, (clean) =>
    clean.replace(/\b(flaky|broken|healthy|insufficient_data)\b(?= → | {2}| *$)/gm, (v) => paintVerdict(paint, v)),
  )
}
