import { hintToJson, toAnalysisJson, type TestAnalysisJson } from '../../analysis/to-analysis-json.js'
import type { OrderHint, TestAnalysis } from '../../analysis/types.js'
import { resolveAnalysisConfig } from '../../analysis/resolve-analysis-config.js'
import { forEachPersistedAnalysis, storeClock } from '../../pipeline/persisted-analyses.js'
import { analysisOptions, type ResolvedConfig } from '../../config/load.js'
import { InputError, NotFoundError } from '../../errors.js'
import type { TestHistory } from '../../model.js'
import { analyzeStore, forEachAnalysis } from '../../pipeline/analyze-store.js'
import { ownerLookupFromConfig } from '../../owners/read-codeowners.js'
import { explainTest, similarTests, type TestExplanation } from '../../pipeline/explain-test.js'
import {
  emit,
  emitJson,
  emitLines,
  jsonArrayItem,
  jsonArrayLines,
  jsonArrayPieces,
  markdownLines,
  num,
  pct,
  renderMarkdownTable,
  renderTable,
  tableLines,
  useColor,
  writeBytes,
  type Io,
} from '../output.js'
import { JsonItemIndenter } from '../indent-json.js'
import { KeptTexts } from '../kept-texts.js'
import { withStore } from '../with-store.js'
import type { StoreFlags } from '../project-option.js'
import { compareText } from '../../compare-text.js'
import {
  ACTION_LABEL,
  FLIP_RATE_CLASS_LABEL,
  PASS_RATE_CLASS_LABEL,
  recommendationLine,
  testStory,
  VERDICT_LABEL,
} from '../../test-story.js'
import { createPainter, paintStrip, paintVerdict } from '../color.js'

export interface AnalyzeCommandOptions extends StoreFlags {
  verdict?: string
  class?: string
  suite?: string
  branch?: string
  since?: string
  limit?: string
  /** Only tests that this code owner owns (CODEOWNERS), e.g. `@org/team`. */
  owner?: string
  json?: boolean
  format?: 'table' | 'markdown' | 'json'
  output?: string
  asOf?: string
  /** A candidate policy file: judge every test under it instead of the config's (`--policy`). */
  policy?: string
  /** With `policy`: print only what the candidate would change (`--diff`). */
  diff?: boolean
}

/** `--since` takes an ISO date or a number of days back (`14d`). */
export function parseSince(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined
  const days = /^(\d+)d$/.exec(value)
  if (days) return now - Number(days[1]) * 86_400_000
  const t = Date.parse(value)
  if (Number.isNaN(t)) throw new InputError(`--since: expected a date or a number of days like 14d, got "${value}"`)
  return t
}

/**
 * `--as-of` names the time every analysis window ends at (an ISO date or date-time); without it, the newest run
 * of the selection (see `asOfTime`). The same flag on `analyze`, `show`, `quarantine auto` and `export`.
 */
export function parseAsOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const t = Date.parse(value)
  if (Number.isNaN(t))
    throw new InputError(`--as-of: expected a date like 2026-03-01 or 2026-03-01T12:00:00Z, got "${value}"`)
  return t
}

const VERDICT_ORDER = { flaky: 0, broken: 1, healthy: 2, insufficient_data: 3 } as const

/** Most harmful first: flaky, then broken, each by score, then by name for a stable order. */
export function leaderboardOrder(a: TestAnalysis, b: TestAnalysis): number {
  return (
    VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict] ||
    b.score - a.score ||
    b.flipRate - a.flipRate ||
    compareText(a.testId, b.testId)
  )
}

/** An analysis with the test's code owners from CODEOWNERS. */
export type OwnedAnalysis = TestAnalysis & { owners: string[] }

/** The flags of `analyze`, checked and parsed. */
function resolveAnalyzeFlags(opts: AnalyzeCommandOptions) {
  const since = parseSince(opts.since)
  const asOf = parseAsOf(opts.asOf)
  const limit = opts.limit === undefined ? undefined : Number(opts.limit)
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1))
    throw new InputError(`--limit must be a positive integer`)
  const verdicts = parseListFilter('--verdict', opts.verdict, VERDICTS)
  const classes = parseListFilter('--class', opts.class, CLASSES)
  return { since, asOf, limit, verdicts, classes }
}

export async function analyze(opts: AnalyzeCommandOptions, io: Io): Promise<OwnedAnalysis[]> {
  const { since, asOf, limit, verdicts, classes } = resolveAnalyzeFlags(opts)
  return withStore(
    opts,
    io,
    async (store, config) => {
      const all = await analyzeStore(store, {
        config: analysisOptions(config),
        now: asOf,
        filter: { suite: opts.suite, branch: opts.branch, since },
      })
      const ownersOf = ownerLookupFromConfig(config, process.cwd(), (m) => io.stderr.write(`warning: ${m}\n`))
      // In place, one pass, no copies: a store of a million tests makes a million analyses.
      const filtered: OwnedAnalysis[] = []
      for (const a of all as OwnedAnalysis[]) {
        if (verdicts && !verdicts.includes(a.verdict)) continue
        if (classes && !classes.includes(a.flipRateClass)) continue
        a.owners = ownersOf(a.test)
        if (opts.owner && !a.owners.includes(opts.owner)) continue
        filtered.push(a)
      }
      all.length = 0
      filtered.sort(leaderboardOrder)
      if (limit && filtered.length > limit) filtered.length = limit
      return filtered
    },
    'read',
  )
}

export const VERDICTS = ['flaky', 'broken', 'healthy', 'insufficient_data'] as const
export const CLASSES = ['stable', 'intermittent', 'flaky', 'chronic'] as const

/**
 * A comma-separated filter, checked against its valid values: a typo (`flakey`) is an error listing them,
 * never a silently empty result.
 * @example parseListFilter('--verdict', 'flaky,broken', VERDICTS) // ['flaky', 'broken']
 */
export function parseListFilter<T extends string>(
  flag: string,
  value: string | undefined,
  valid: readonly T[],
): T[] | undefined {
  if (value === undefined) return undefined
  const items = value.split(',').map((v) => v.trim())
  const bad = items.filter((v) => !(valid as readonly string[]).includes(v))
  if (bad.length)
    throw new InputError(`${flag}: unknown value ${bad.map((b) => `"${b}"`).join(', ')}; valid: ${valid.join(', ')}`)
  return items as T[]
}

/** Which filters were given, to tell "nothing stored" from "nothing matches these filters". */
export function describeFilters(opts: AnalyzeCommandOptions): string[] {
  const given: [string, string | undefined][] = [
    ['--suite', opts.suite],
    ['--branch', opts.branch],
    ['--since', opts.since],
    ['--verdict', opts.verdict],
    ['--class', opts.class],
    ['--owner', opts.owner],
  ]
  return given.filter(([, v]) => v !== undefined).map(([k, v]) => `${k} ${v}`)
}

const evidenceText = (a: TestAnalysis) => a.evidence.map((e) => e.kind.replace(/_/g, ' ')).join('; ') || '–'

function leaderboardRow(a: TestAnalysis): string[] {
  return [
    a.testId,
    String(a.runs),
    pct(a.passRate),
    num(a.flipRate),
    num(a.ewmaFlipRate),
    num(a.score),
    num(a.confidence),
    FLIP_RATE_CLASS_LABEL[a.flipRateClass],
    ACTION_LABEL[a.recommendation.action],
    VERDICT_LABEL[a.verdict],
    evidenceText(a),
  ]
}

/** The leaderboard's verdict column, coloured on a terminal. */
const VERDICT_COLUMN = 9

/** Table options of the leaderboard: numbers right-aligned, the verdict in its colour when stdout takes colour. */
function leaderboardTable(io: Io, output: string | undefined) {
  const paint = createPainter(useColor(io, output))
  return {
    right: [1, 2, 3, 4, 5, 6],
    maxWidth: 70,
    paint: (column: number, cell: string) => (column === VERDICT_COLUMN ? paintVerdict(paint, cell) : cell),
  }
}

const HEADERS = [
  'test',
  'runs',
  'pass rate',
  'flip',
  'ewma',
  'score',
  'conf',
  'flip-rate class',
  'recommendation',
  'verdict',
  'evidence',
]

/** Written line by line: the leaderboard of a million tests is larger than one string can be. */
export async function printAnalyze(list: OwnedAnalysis[], opts: AnalyzeCommandOptions, io: Io): Promise<void> {
  if (opts.json || opts.format === 'json')
    return emitLines(
      io,
      jsonArrayLines(list, (a) => ({ ...toAnalysisJson(a), owners: a.owners })),
      opts.output,
    )
  if (opts.format === 'markdown') return emitLines(io, markdownLines(HEADERS, list, leaderboardRow), opts.output)
  if (!list.length) {
    const filters = describeFilters(opts)
    return void io.stderr.write(
      filters.length
        ? `no tests match ${filters.join(' ')}\n`
        : 'no tests stored yet (store reports first: flakewatch ingest <files>)\n',
    )
  }
  await emitLines(io, tableLines(HEADERS, list, leaderboardRow, leaderboardTable(io, opts.output)), opts.output, {
    coloured: true,
  })
  io.stderr.write(`\n${verdictCounts(list)}\n`)
}

/** The config with a candidate policy file applied (`--policy`): its module is loaded only then. */
async function withPolicyCandidate(config: ResolvedConfig, file: string): Promise<ResolvedConfig> {
  const { applyPolicyCandidate, readPolicyCandidate } = await import('../../config/policy-candidate.js')
  return applyPolicyCandidate(config, readPolicyCandidate(file))
}

/** One leaderboard row as `analyzeAndPrint` keeps it: the sort key and where its output is. */
interface KeptRow {
  rank: number
  score: number
  flipRate: number
  testId: string
  verdict: TestAnalysis['verdict']
  /** Table and Markdown: the cells as a JSON array. */
  cells: string
  /** JSON: the index of the test's printed item in the kept texts. */
  item: number
}

/** A test's item of `analyze --json`: its analysis and owners, as printed. */
const analysisItem = (json: TestAnalysisJson, owners: string[]) => jsonArrayItem({ ...json, owners })

/**
 * `flakewatch analyze` as the CLI runs it: the output of `analyze` + `printAnalyze`, made without holding every
 * analysis, so that a store of a million tests fits in a few hundred MB. Each analysis is reduced as it is made to
 * its sort key and what the output needs: its cells (table, Markdown), or its JSON item as printed (JSON, kept in
 * memory or a temporary file: `KeptTexts`), written in leaderboard order. Order-dependency hints, known once the
 * scan is through, are added then.
 */
export async function analyzeAndPrint(opts: AnalyzeCommandOptions, io: Io): Promise<void> {
  const { since, asOf, limit, verdicts, classes } = resolveAnalyzeFlags(opts)
  const json = opts.json || opts.format === 'json'
  const items = json ? new KeptTexts() : null
  try {
    const { rows, orderHints } = await withStore(
      opts,
      io,
      async (store, stored) => {
        const config = opts.policy ? await withPolicyCandidate(stored, opts.policy) : stored
        const ownersOf = ownerLookupFromConfig(config, process.cwd(), (m) => io.stderr.write(`warning: ${m}\n`))
        const kept: KeptRow[] = []
        const indenter = new JsonItemIndenter()
        /**
         * Keeps a test the filters select: its sort key, and what `output` makes of it given its owners: its cells
         * as JSON text (table, Markdown), or its JSON item (JSON), as text or UTF-8.
         */
        const keep = (
          a: Pick<TestAnalysis, 'verdict' | 'score' | 'flipRate' | 'testId' | 'flipRateClass' | 'test'>,
          output: (owners: string[]) => string | Uint8Array,
        ) => {
          if (verdicts && !verdicts.includes(a.verdict)) return
          if (classes && !classes.includes(a.flipRateClass)) return
          const owners = ownersOf(a.test)
          if (opts.owner && !owners.includes(opts.owner)) return
          const out = output(owners)
          kept.push({
            rank: VERDICT_ORDER[a.verdict],
            score: a.score,
            flipRate: a.flipRate,
            testId: a.testId,
            verdict: a.verdict,
            cells: items === null ? (out as string) : '',
            item: items === null ? -1 : typeof out === 'string' ? items.add(out) : items.addBytes(out),
          })
        }
        // toAnalysisJson's keys are already in wire casing (test/wire-json.test.ts): nothing is converted.
        const fresh = (a: TestAnalysis) =>
          keep(a, (owners) =>
            items === null ? JSON.stringify(leaderboardRow(a)) : analysisItem(toAnalysisJson(a), owners),
          )
        // The default selection (no --since, --branch) as JSON is read from the persisted analyses where they are
        // exact at the clock; a full scan otherwise, or when too few are.
        const persisted =
          json &&
          since === undefined &&
          opts.branch === undefined &&
          (await forEachPersistedAnalysis(
            store,
            resolveAnalysisConfig(analysisOptions(config)),
            { clock: asOf ?? (await storeClock(store, opts.suite)), suite: opts.suite },
            {
              exact: (r) =>
                keep(
                  {
                    verdict: r.verdict!,
                    score: r.score!,
                    flipRate: r.flipRate!,
                    testId: r.testId,
                    flipRateClass: r.flipRateClass!,
                    test: { testId: r.testId, suite: r.suite, module: r.module, name: r.name, file: r.file },
                  },
                  // The row is JSON.stringify's text of the item without owners: indented as it is, not parsed.
                  (owners) => indenter.indent(`${r.json.slice(0, -1)},"owners":${JSON.stringify(owners)}}`),
                ),
              analysed: fresh,
            },
          ))
        const hints = persisted
          ? new Map<string, OrderHint>()
          : await forEachAnalysis(
              store,
              {
                config: analysisOptions(config),
                now: asOf,
                filter: { suite: opts.suite, branch: opts.branch, since },
                orderHints: json,
              },
              (_, a) => fresh(a),
            )
        return { rows: kept, orderHints: hints }
      },
      'read',
    )
    rows.sort(
      (a, b) => a.rank - b.rank || b.score - a.score || b.flipRate - a.flipRate || compareText(a.testId, b.testId),
    )
    // The summary counts every test the filters matched, not only the rows --limit keeps.
    const summary = verdictCounts(rows)
    const matched = rows.length
    if (limit && rows.length > limit) rows.length = limit
    if (items !== null) {
      const itemAt = (i: number): Uint8Array | string => {
        const r = rows[i]!
        const hint = orderHints.get(r.testId)
        if (hint === undefined) return items.bytes(r.item)
        // Rare (a test that fails after another): its item is made again with the hint.
        const item = JSON.parse(items.text(r.item)) as TestAnalysisJson
        item.hints.push(hintToJson(hint))
        return jsonArrayItem(item)
      }
      return await writeBytes(io, jsonArrayPieces(rows.length, itemAt), opts.output)
    }
    const cellsOf = (r: KeptRow) => JSON.parse(r.cells) as string[]
    if (opts.format === 'markdown') return await emitLines(io, markdownLines(HEADERS, rows, cellsOf), opts.output)
    if (!rows.length) return printAnalyze([], opts, io)
    await emitLines(io, tableLines(HEADERS, rows, cellsOf, leaderboardTable(io, opts.output)), opts.output, {
      coloured: true,
    })
    const shown = rows.length < matched ? ` (the first ${rows.length} shown: --limit ${limit})` : ''
    io.stderr.write(`\n${summary}${shown}\n`)
  } finally {
    items?.close()
  }
}

/** "12 tests: 3 flaky, 9 healthy", in the order the verdicts first appear, in their human words. */
function verdictCounts(list: readonly { verdict: TestAnalysis['verdict'] }[]): string {
  const counts: Record<string, number> = {}
  for (const a of list) counts[VERDICT_LABEL[a.verdict]] = (counts[VERDICT_LABEL[a.verdict]] ?? 0) + 1
  return `${list.length} tests: ${Object.entries(counts)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ')}`
}

export type ShowResult = TestExplanation

export async function show(testId: string, opts: AnalyzeCommandOptions, io: Io): Promise<ShowResult> {
  const asOf = parseAsOf(opts.asOf)
  return withStore(
    opts,
    io,
    async (store, config) => {
      const ownersOf = ownerLookupFromConfig(config, process.cwd(), (m) => io.stderr.write(`warning: ${m}\n`))
      const found = await explainTest(store, config, testId, { asOf, ownersOf })
      if (!found) {
        const near = await similarTests(store, testId)
        throw new NotFoundError(
          `no results for test "${testId}"${near.length ? `; did you mean: ${near.join(', ')}` : ''}`,
        )
      }
      return found
    },
    'read',
  )
}

/** One character per run, oldest to newest: ✓ pass, ✗ fail, ↻ pass on retry, · skipped. */
export function historyStrip(history: TestHistory, last = 60): string {
  return history.entries
    .slice(-last)
    .map((e) => (e.status === 'skipped' ? '·' : e.status === 'passed' ? (e.flakyOnRetry ? '↻' : '✓') : '✗'))
    .join('')
}

export function printShow(r: ShowResult, opts: AnalyzeCommandOptions, io: Io): void {
  const a = r.analysis
  if (opts.json || opts.format === 'json') {
    return emitJson(
      io,
      {
        ...toAnalysisJson(a),
        owners: r.owners,
        history: r.history.entries.map((e) => ({
          run_id: e.run.runId,
          at: new Date(e.run.at).toISOString(),
          status: e.status,
          flaky_on_retry: e.flakyOnRetry,
          attempts: e.attempts,
          position: e.position ?? null,
          revision: e.run.revision,
          branch: e.run.branch,
          runner_id: e.run.runnerId,
          env: e.run.env,
        })),
        quarantine: r.quarantine,
        audit: r.audit,
        names: r.names,
      },
      opts.output,
    )
  }
  const md = opts.format === 'markdown'
  const h = (t: string) => (md ? `\n### ${t}\n` : `\n${t}`)
  const lines: string[] = []
  lines.push(md ? `## ${a.testId}` : a.testId)
  const story = testStory(toAnalysisJson(a))
  lines.push(`verdict: ${story.verdictLabel} — ${a.reason}`)
  lines.push(`recommendation: ${recommendationLine(story)}`)
  if (r.owners.length) lines.push(`owners: ${r.owners.join(' ')}`)
  if (r.names.length) lines.push(`also reported as: ${r.names.join(', ')}`)
  lines.push(`history (oldest → newest): ${historyStrip(r.history)}`)
  lines.push(story.outcomes)
  lines.push(
    `measures: pass rate ${pct(a.passRate)} (pass-rate class ${PASS_RATE_CLASS_LABEL[a.passRateClass]}), ` +
      `flip ${num(a.flipRate)}, ewma ${num(a.ewmaFlipRate)} ` +
      `(flip-rate class ${FLIP_RATE_CLASS_LABEL[a.flipRateClass]}); ${story.scoreNote}`,
  )
  if (story.measuresNote) lines.push(`  (${story.measuresNote})`)
  if (a.timeLostMs > 0) lines.push(`CI time lost to failed attempts: ${(a.timeLostMs / 1000).toFixed(1)} s`)
  lines.push(h('Score components'))
  const comp = Object.entries(a.components).map(([k, v]: [string, number]) => [k, num(v)])
  lines.push(
    md ? renderMarkdownTable(['component', 'value'], comp) : renderTable(['component', 'value'], comp, { right: [1] }),
  )
  if (a.evidence.length) {
    lines.push(h('Evidence'))
    for (const e of a.evidence) lines.push(`- ${e.kind}: ${e.detail}`)
  }
  if (a.failureModes.length) {
    lines.push(h(story.failureModes.title))
    if (story.failureModes.note) lines.push(story.failureModes.note)
    const rows = a.failureModes.map((m) => [
      String(m.count),
      new Date(m.firstSeen).toISOString().slice(0, 10),
      new Date(m.lastSeen).toISOString().slice(0, 10),
      (m.example ?? m.signature).split('\n')[0]!.slice(0, 120),
    ])
    lines.push(
      md
        ? renderMarkdownTable(['count', 'first', 'last', 'example'], rows)
        : renderTable(['count', 'first', 'last', 'example'], rows, { right: [0], maxWidth: 120 }),
    )
  }
  if (a.contexts.length > 1 || (a.contexts[0] && a.contexts[0].context !== 'default')) {
    lines.push(h('Contexts'))
    const rows = a.contexts.map((c) => [
      c.context,
      String(c.passes),
      String(c.failures),
      pct(c.passRate),
      PASS_RATE_CLASS_LABEL[c.passRateClass],
    ])
    lines.push(
      md
        ? renderMarkdownTable(['context', 'passes', 'failures', 'pass rate', 'pass-rate class'], rows)
        : renderTable(['context', 'passes', 'failures', 'pass rate', 'pass-rate class'], rows, { right: [1, 2, 3] }),
    )
  }
  if (a.hints.length) {
    lines.push(h('Hints'))
    for (const hint of a.hints) lines.push(`- ${hint.message}`)
  }
  lines.push(h('Quarantine'))
  lines.push(
    r.quarantine
      ? `quarantined (${r.quarantine.source}) by ${r.quarantine.createdBy}: ${r.quarantine.reason}; owner ${r.quarantine.owner ?? '–'}; expires ${r.quarantine.expiresAt ?? 'never'}`
      : 'not quarantined',
  )
  for (const e of r.audit) lines.push(`- ${e.at} ${e.action} by ${e.actor}: ${e.reason}`)
  const paint = createPainter(!md && useColor(io, opts.output))
  // Coloured after the text is clean: the verdict word and the history strip, on their own lines' heads.
  emit(io, lines.join('\n'), opts.output, (clean) =>
    clean
      .replace(/^verdict: ([a-z ]+?)(?= — )/m, (_, v: string) => `verdict: ${paintVerdict(paint, v)}`)
      .replace(
        /^(history \(oldest → newest\): )(\S*)/m,
        (_, head: string, strip: string) => head + paintStrip(paint, strip),
      ),
  )
}
