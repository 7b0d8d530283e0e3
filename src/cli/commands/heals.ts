import type { HealStore } from '../../heal/healer.js'
import type { HealRecord } from '../../store/store.js'
import { jsonText, renderTable, sanitizeCell } from '../output.js'

export interface HealsOptions {
  store: HealStore
  json?: boolean
  /** Only this test's heals. */
  testId?: string
  /** Only heals at or after this ISO time. */
  since?: string
  limit?: number
}

/**
 * The heal log, newest first.
 * @example const list = await heals({ store, testId: 'e2e::checkout.spec.ts::pays' })
 */
export async function heals(opts: HealsOptions): Promise<HealRecord[]> {
  return opts.store.listHeals({ testId: opts.testId, since: opts.since, limit: opts.limit })
}

/**
 * Writes the heal log: a table per heal with the locator to paste into the test, or the records as JSON.
 * @example printHeals(await heals({ store }), { json: false }, process.stdout)
 */
export function printHeals(list: readonly HealRecord[], opts: { json?: boolean }, out: NodeJS.WritableStream): void {
  if (opts.json) {
    out.write(`${jsonText(list)}\n`)
    return
  }
  if (list.length === 0) {
    out.write('No heals recorded.\n')
    return
  }
  const when = (at: string) => at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')
  const rows = list.map((h) => [when(h.at), h.score.toFixed(2), h.testId, h.oldLocator])
  out.write(`${renderTable(['at', 'score', 'test', 'broken locator'], rows, { right: [1] })}\n\n`)
  for (const h of list) {
    const signals = Object.entries(h.breakdown)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ')
    out.write(
      [
        `${sanitizeCell(h.testId)}`,
        `  was:   ${sanitizeCell(h.oldLocator)}`,
        `  use:   ${sanitizeCell(h.newLocator)}`,
        `  score: ${h.score.toFixed(2)} (${signals})`,
        ...(h.url ? [`  url:   ${sanitizeCell(h.url)}`] : []),
        ...(h.runId ? [`  run:   ${sanitizeCell(h.runId)}`] : []),
        `  at:    ${h.at}`,
        '',
      ].join('\n') + '\n',
    )
  }
}
