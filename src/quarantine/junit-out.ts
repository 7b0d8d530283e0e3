import { isFailure, type Result } from '../model.js'
import type { Forgiver } from './gate.js'

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

// Characters XML 1.0 cannot carry at all, even escaped; test output sometimes holds them.
// eslint-disable-next-line no-control-regex
const INVALID_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g

export function escapeXml(text: string): string {
  return text.replace(INVALID_XML, '').replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!)
}

/** What a quarantined failure's `<skipped message>` says: the quarantine or rule, its reason and owner. */
export function skipMessage(q: Forgiver): string {
  return `quarantined${q.rule ? ` by rule ${q.rule}` : ''}: ${q.reason}${q.owner ? ` (owner: ${q.owner})` : ''}`
}

/**
 * A JUnit copy of the job's results in which quarantined failures are `<skipped>` with the quarantine reason, so
 * that CI UIs show them without failing. Expired quarantines forgive nothing here either. Other results keep their status and message.
 */
export function formatJunit(results: Result[], forgiverOf: (r: Result) => Forgiver | undefined): string {
  const bySuite = new Map<string, Result[]>()
  for (const r of results) {
    const list = bySuite.get(r.test.module) ?? []
    list.push(r)
    bySuite.set(r.test.module, list)
  }
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<testsuites name="flakewatch gate">']
  for (const [module, list] of bySuite) {
    let failures = 0
    let errors = 0
    let skipped = 0
    const cases: string[] = []
    for (const r of list) {
      const q = isFailure(r.status) ? forgiverOf(r) : undefined
      const time = ((r.durationMs ?? 0) / 1000).toFixed(3)
      const open = `    <testcase classname="${escapeXml(module)}" name="${escapeXml(r.test.name)}" time="${time}"`
      if (isFailure(r.status) && q) {
        skipped++
        cases.push(`${open}>\n      <skipped message="${escapeXml(skipMessage(q))}"/>\n    </testcase>`)
      } else if (isFailure(r.status)) {
        const tag = r.status === 'error' ? 'error' : 'failure'
        if (tag === 'error') errors++
        else failures++
        const type = r.errorType ? ` type="${escapeXml(r.errorType)}"` : ''
        cases.push(
          `${open}>\n      <${tag} message="${escapeXml((r.message ?? '').split('\n')[0] ?? '')}"${type}>${escapeXml(r.message ?? '')}</${tag}>\n    </testcase>`,
        )
      } else if (r.status === 'skipped') {
        skipped++
        cases.push(`${open}>\n      <skipped/>\n    </testcase>`)
      } else cases.push(`${open}/>`)
    }
    lines.push(
      `  <testsuite name="${escapeXml(module)}" tests="${list.length}" failures="${failures}" errors="${errors}" skipped="${skipped}">`,
      ...cases,
      '  </testsuite>',
    )
  }
  lines.push('</testsuites>', '')
  return lines.join('\n')
}
