import { InputError } from '../../errors.js'
import { ownerLookupFromConfig } from '../../owners/read-codeowners.js'
import { IMPACT_MAX_TESTS, impactFromStore, impactToJson } from '../../pipeline/impact.js'
import type { ImpactCostJson, ImpactResponse } from '../../server/api-types.js'
import { emit, emitJson, renderTable, type Io } from '../output.js'
import type { StoreFlags } from '../project-option.js'
import { parseAsOf, parseSince } from './analyze.js'
import { withReadStore } from '../with-store.js'

export interface ImpactCommandOptions extends StoreFlags {
  suite?: string
  branch?: string
  since?: string
  asOf?: string
  limit?: string
  json?: boolean
  output?: string
}

/** `--limit`: the costly tests listed, 1 to 100 as in the API (default 20). */
function parseLimit(value: string | undefined): number {
  if (value === undefined) return 20
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1 || n > IMPACT_MAX_TESTS)
    throw new InputError(`--limit: expected a whole number from 1 to ${IMPACT_MAX_TESTS}, got "${value.slice(0, 40)}"`)
  return n
}

/**
 * `flakewatch impact`: what flaky tests cost CI in the selected runs, by the rules and in the JSON of
 * `GET /api/v1/impact` (docs/impact.md), read from the store with the verdicts `analyze` gives.
 */
export async function impact(opts: ImpactCommandOptions, io: Io): Promise<ImpactResponse> {
  const since = parseSince(opts.since)
  const asOf = parseAsOf(opts.asOf)
  const limit = parseLimit(opts.limit)
  return withReadStore(opts, io, async (store, config) => {
    const { impact: found, brokenMin } = await impactFromStore(store, {
      config,
      owners: ownerLookupFromConfig(config, process.cwd(), (m) => io.stderr.write(`warning: ${m}\n`)),
      filter: { suite: opts.suite, branch: opts.branch, since },
      asOf,
      limit,
    })
    return impactToJson(found, { brokenMin, generatedAt: new Date().toISOString() })
  })
}

/** `850 ms`, `12.5 s`, `3 min 20 s`, `5 h 12 min`. */
export function spentText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`
  const s = Math.round(ms / 1000)
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

const COST_HEADERS = ['time lost', 'failures', 'failed attempts', 'passes on retry']
const costCells = (c: ImpactCostJson) => [
  spentText(c.time_lost_ms),
  String(c.failures),
  String(c.failed_attempts),
  String(c.passes_on_retry),
]
/** Right-aligned columns: every one but the first `left`. */
const numbers = (columns: number, left = 1) => ({ right: Array.from({ length: columns - left }, (_, i) => i + left) })

/** The JSON of the API, or four tables: the weeks, the owners, the suites and the most costly tests. */
export function printImpact(report: ImpactResponse, opts: ImpactCommandOptions, io: Io): void {
  if (opts.json) return emitJson(io, report, opts.output)
  const t = report.totals
  if (t.runs === 0) {
    const what = [
      opts.suite && `suite ${opts.suite}`,
      opts.branch && `branch ${opts.branch}`,
      opts.since && `since ${opts.since}`,
    ]
    const filters = what.filter(Boolean).join(', ')
    if (opts.output) emit(io, '', opts.output)
    return void io.stderr.write(
      filters
        ? `no runs match (${filters})\n`
        : 'no runs stored yet (store reports first: flakewatch ingest <files>)\n',
    )
  }
  const out: string[] = []
  out.push(
    `CI time lost to flaky tests: ${spentText(t.time_lost_ms)} in ${t.failed_attempts} failed attempt(s); ` +
      `${t.failures} failure(s) and ${t.passes_on_retry} pass(es) on retry`,
    `${t.tests} test(s) in ${t.runs} run(s): ${t.flaky} flaky and ${t.broken} broken now`,
    '',
    renderTable(
      ['week', 'runs', 'flaky tests', 'broken tests', ...COST_HEADERS],
      report.weeks.map((w) => [w.week, String(w.runs), String(w.flaky_tests), String(w.broken_tests), ...costCells(w)]),
      numbers(8),
    ),
    '',
    renderTable(
      ['owner', 'tests', 'flaky', 'broken', ...COST_HEADERS],
      report.owners.map((g) => [
        g.owner ?? '(no owner)',
        String(g.tests),
        String(g.flaky),
        String(g.broken),
        ...costCells(g),
      ]),
      numbers(8),
    ),
  )
  if (report.owners_total > report.owners.length)
    out.push(`… ${report.owners_total - report.owners.length} more owners`)
  out.push(
    '',
    renderTable(
      ['suite', 'tests', 'flaky', 'broken', ...COST_HEADERS],
      report.suites.map((g) => [g.suite, String(g.tests), String(g.flaky), String(g.broken), ...costCells(g)]),
      numbers(8),
    ),
  )
  if (report.suites_total > report.suites.length)
    out.push(`… ${report.suites_total - report.suites.length} more suites`)
  out.push('')
  if (report.tests.length) {
    out.push(
      renderTable(
        ['most costly flaky tests', 'runs', ...COST_HEADERS, 'owners'],
        report.tests.map((x) => [x.test_id, String(x.runs), ...costCells(x), x.owners.join(' ') || '–']),
        { ...numbers(6), maxWidth: 70 },
      ),
    )
    if (report.costly_tests > report.tests.length)
      out.push(`… ${report.costly_tests - report.tests.length} more costly tests (--limit up to ${IMPACT_MAX_TESTS})`)
  } else out.push('no flaky test cost anything in these runs')
  emit(io, out.join('\n'), opts.output)
}
