import { createHash } from 'node:crypto'
import { withOrderHints } from '../analysis/analyze-histories.js'
import { analyzeTest, type AnalysisContext } from '../analysis/analyze-test.js'
import { asOfTime } from '../analysis/as-of.js'
import { infraRunIds } from '../analysis/infra-run-ids.js'
import { createOrderIndex } from '../analysis/order-dependency.js'
import {
  resolveAnalysisConfig,
  type AnalysisConfigOptions,
  type ResolvedAnalysisConfig,
} from '../analysis/resolve-analysis-config.js'
import { toAnalysisJson } from '../analysis/to-analysis-json.js'
import type { TestAnalysis } from '../analysis/types.js'
import {
  analysisWindows,
  fileValidityAt,
  validityAt,
  VALID_EVER_FROM,
  VALID_EVER_UNTIL,
  type Validity,
} from '../analysis/validity.js'
import { compareText } from '../compare-text.js'
import { appendAll } from '../extent.js'
import type { TestHistory } from '../model.js'
import { windowFacts, type WindowFacts } from '../analysis/window-facts.js'
import {
  ANALYSIS_BATCH,
  type AnalysisClaim,
  type AnalysisRead,
  type PersistedAnalysis,
  type RunFile,
  type TestFile,
} from '../store/analyses.js'
import type { Store } from '../store/store.js'
import { VERSION } from '../version.js'

/** Rows one refresh claims and analyses at a time: a few hundred tests, with their file-mates. */
export const REFRESH_CHUNK = 500

/**
 * Results whose histories an analysis holds at once, about: what its memory follows, not the tests it was given.
 * A chunk of 500 tests of 5,000 results each (10⁸ results over 20,000 tests) held 2.5M entries in one analysis,
 * 0.7–1 GB of heap, where 50 results a test (10⁶) held 25,000. So the tests are analysed in parts of whole files
 * sized to this, with their file-mates. The answers are the same: a test's analysis reads its own file only.
 */
export const ANALYSIS_RESULTS = 250_000

/**
 * Tests in the first part, before the histories read say how many results a test has: about one file. Ten tests of
 * 25,000 results each (250 runs a day for 100 days) fit the budget; the next part, sized from these, holds 500 tests
 * of a short history as well.
 */
const FIRST_PART_TESTS = 10

/**
 * Names the analysis a row was made with: the configuration and flakewatch's version. A row is used only by a
 * reader with the same fingerprint, so a changed threshold or a new release never serves an old verdict.
 * @example analysisFingerprint(resolveAnalysisConfig()) // '3f1c…'
 */
export function analysisFingerprint(cfg: ResolvedAnalysisConfig): string {
  return createHash('sha256')
    .update(`${VERSION}\n${JSON.stringify(cfg)}`)
    .digest('hex')
    .slice(0, 32)
}

/** The clock `analyze` uses without `--as-of`: the newest stored run (of `suite`) plus 1 ms. */
export async function storeClock(store: Store, suite?: string): Promise<number> {
  return asOfTime(await store.runSummaries({ suite, limit: 1 }), undefined, Date.now())
}

/** A test's analysis, with order hints, and the clocks over which it stays exact. */
export interface GroupAnalysis {
  analysis: TestAnalysis
  validity: Validity
  /** What the server's kiosk and trends read besides the analysis (see `windowFacts`). */
  facts: WindowFacts
}

/**
 * Analyses whole files at one clock: every history given, with the file-mates of each test that has an execution
 * order (so that order hints are the full scan's), each with its validity (see `validityAt`). Pure.
 * @example analyzeFiles(histories, cfg, { now, excludedRuns }).get(testId)?.analysis.verdict
 */
export function analyzeFiles(
  histories: readonly TestHistory[],
  cfg: ResolvedAnalysisConfig,
  ctx: AnalysisContext,
): Map<string, GroupAnalysis> {
  const sorted = [...histories].sort((a, b) => compareText(a.test.testId, b.test.testId))
  const order = createOrderIndex(cfg.hints, { ...ctx, lookbackDays: cfg.scoring.lookbackDays })
  const analyses: TestAnalysis[] = []
  const files = new Map<string, TestHistory[]>()
  for (const h of sorted) {
    order.add(h)
    analyses.push(analyzeTest(h, cfg, ctx))
    const key = `${h.test.suite}\u0000${h.test.module}`
    const file = files.get(key)
    if (file === undefined) files.set(key, [h])
    else file.push(h)
  }
  withOrderHints(analyses, order.hints())
  const windows = analysisWindows(cfg)
  const alone = fileValidityAt(ctx.now, [], windows)
  const fileValidity = new Map<string, Validity>()
  const out = new Map<string, GroupAnalysis>()
  sorted.forEach((h, i) => {
    // Without an execution order a test's analysis owes nothing to its file-mates, at any clock.
    let mates = alone
    if (hasOrder(h)) {
      const key = `${h.test.suite}\u0000${h.test.module}`
      mates = fileValidity.get(key) ?? alone
      if (!fileValidity.has(key)) fileValidity.set(key, (mates = fileValidityAt(ctx.now, files.get(key)!, windows)))
    }
    out.set(h.test.testId, {
      analysis: analyses[i]!,
      validity: validityAt(ctx.now, h, mates, windows),
      facts: windowFacts(h, cfg, ctx),
    })
  })
  return out
}

/** Whether any result of the test has a place in its run's execution order (what order hints compare). */
function hasOrder(h: TestHistory): boolean {
  return h.entries.some((e) => e.position !== undefined && e.position !== null)
}

/**
 * Reads the histories of these tests' files and analyses them at `clock`, with the infrastructure-failure guard
 * of the runs they name: the cost follows those files' results, not the store's. `beforeMates` is called with the
 * file-mates about to be read (a refresh claims theirs: each file is then analysed once, not once per chunk).
 */
async function analyzeTestsFiles(
  store: Store,
  cfg: ResolvedAnalysisConfig,
  clock: number,
  testIds: string[],
  beforeMates?: (mates: string[]) => Promise<void>,
): Promise<{ analyses: Map<string, GroupAnalysis>; results: number }> {
  const analyses = store.analyses()
  const histories: TestHistory[] = []
  let results = 0
  const add = (h: TestHistory) => {
    histories.push(h)
    results += h.entries.length
  }
  for await (const h of store.scanHistory({ testIds })) add(h)
  // Only a test with an execution order can have an order hint: its file-mates are read for those alone.
  const ordered = histories.filter(hasOrder).map((h) => h.test.testId)
  if (ordered.length > 0) {
    const own = new Set(testIds)
    const mates = (await analyses.fileMates(ordered)).filter((id) => !own.has(id))
    await beforeMates?.(mates)
    for (let i = 0; i < mates.length; i += ANALYSIS_BATCH) {
      for await (const h of store.scanHistory({ testIds: mates.slice(i, i + ANALYSIS_BATCH) })) add(h)
    }
  }
  const runIds = new Set<string>()
  for (const h of histories) for (const e of h.entries) runIds.add(e.run.runId)
  const excludedRuns = infraRunIds(await analyses.runCounts([...runIds]), cfg)
  return { analyses: analyzeFiles(histories, cfg, { now: clock, excludedRuns }), results }
}

/**
 * {@link analyzeTestsFiles} in parts of about {@link ANALYSIS_RESULTS} results, each part's histories dropped
 * before the next is read. The tests go in key order, which begins with the suite and file, so that a part takes
 * whole files; a test already analysed as a file-mate of an earlier part is not read again. Each part's size
 * follows the results a test of the part before had, file-mates included.
 */
async function analyzeTestsInParts(
  store: Store,
  cfg: ResolvedAnalysisConfig,
  { clock, results: budget = ANALYSIS_RESULTS }: { clock: number; results?: number | undefined },
  testIds: readonly string[],
  beforeMates?: (mates: string[]) => Promise<void>,
): Promise<Map<string, GroupAnalysis>> {
  const ids = [...testIds].sort(compareText)
  const out = new Map<string, GroupAnalysis>()
  let size = FIRST_PART_TESTS
  for (let i = 0; i < ids.length;) {
    const part: string[] = []
    for (; i < ids.length && part.length < size; i++) if (!out.has(ids[i]!)) part.push(ids[i]!)
    if (part.length === 0) continue
    const { analyses, results } = await analyzeTestsFiles(store, cfg, clock, part, beforeMates)
    for (const [testId, g] of analyses) out.set(testId, g)
    size = Math.max(1, Math.floor((budget * part.length) / Math.max(1, results)))
  }
  return out
}

/**
 * One test's analysis at `clock`, from its file's histories, as a persisted row holds it (`analyze --json`'s form,
 * without owners), or null when it has no results: for a read that finds no analysed row and cannot write one (a
 * read-only instance over a store whose rows a reporter left stale). Costs one file, never the store.
 */
export async function analyseTestAfresh(
  store: Store,
  cfg: ResolvedAnalysisConfig,
  clock: number,
  testId: string,
): Promise<string | null> {
  const group = (await analyzeTestsFiles(store, cfg, clock, [testId])).analyses.get(testId)
  if (!group || group.analysis.runs === 0) return null
  return JSON.stringify(toAnalysisJson(group.analysis))
}

export interface RefreshOptions {
  /** Only the rows of these runs' files (a writer's own, just after its commit). Default: every row due. */
  runIds?: string[]
  /** Most rows refreshed by this call (default: no bound). */
  maxRows?: number
  /** Rows claimed at a time (default {@link REFRESH_CHUNK}). */
  chunk?: number
  /** Results whose histories are held at once, about (default {@link ANALYSIS_RESULTS}). */
  results?: number
  /** Also refresh rows made with another configuration (after a configuration change). */
  otherConfig?: boolean
  /** The clock to analyse at (default: the store's, as `analyze` uses without `--as-of`). */
  clock?: number
}

/**
 * Re-analyses the rows that need it: claims a chunk (a lease), reads their files' histories by index, analyses
 * them outside any transaction and writes each row only if no write of results touched it meanwhile. Resumable:
 * it only ever asks for rows that need work, so a refresh that dies leaves them for the next.
 * @example await refreshAnalyses(store, cfg, { runIds: ['r1'] })
 */
export async function refreshAnalyses(
  store: Store,
  cfg: ResolvedAnalysisConfig,
  opts: RefreshOptions = {},
): Promise<{ claimed: number; written: number }> {
  const config = analysisFingerprint(cfg)
  const maxRows = opts.maxRows ?? Infinity
  const chunk = opts.chunk ?? REFRESH_CHUNK
  const analyses = store.analyses()
  const done = { claimed: 0, written: 0 }
  /**
   * Claims and refreshes chunks with `claim` until it finds nothing more (or the bound is reached). A claim of
   * leased rows claims again the rows it could not write (a commit marked them meanwhile), so it stops at a chunk
   * of which none was written: that commit's own refresh takes them.
   */
  const drain = async (claim: (clock: number, limit: number) => Promise<AnalysisClaim[]>, leased = false) => {
    while (done.claimed < maxRows) {
      const clock = opts.clock ?? (await storeClock(store))
      const claims = await claim(clock, Math.min(chunk, maxRows - done.claimed))
      if (claims.length === 0) return
      done.claimed += claims.length
      const more = await refreshClaims(store, cfg, { config, clock, results: opts.results }, claims)
      done.claimed += more.claimed
      done.written += more.written
      if (leased && more.written === 0) return
    }
  }
  if (opts.runIds === undefined) {
    // The files of the oldest rows due, a group of them at a time, so that a chunk's order hints read few files.
    await drain(async (clock, limit) => {
      const [group] = fileGroups(await analyses.dueFiles(clock, limit), limit)
      return group === undefined ? [] : analyses.claimAnalyses({ clock, limit, files: group })
    })
    if (opts.otherConfig === true) await drain((_, limit) => analyses.claimOtherConfig(config, limit))
    return done
  }
  // A writer's rows: the files of its runs (a command may store thousands of reports), a page of files at a time,
  // each claimed file after file. A claim never looks past its page, so its cost follows the files, not the runs.
  for (let i = 0; i < opts.runIds.length && done.claimed < maxRows; i += ANALYSIS_BATCH) {
    const runIds = opts.runIds.slice(i, i + ANALYSIS_BATCH)
    let after: TestFile | null = null
    while (done.claimed < maxRows) {
      const files = await analyses.runFiles(runIds, after, ANALYSIS_BATCH)
      if (files.length === 0) break
      for (const group of fileGroups(files, chunk)) {
        // Leased rows too: a lease another refresh holds does not promise that it writes the row before this
        // writer answers (see `AnalysisClaimOptions.leased`). A row written meanwhile is no longer due.
        await drain((clock, limit) => analyses.claimAnalyses({ clock, limit, files: group, leased: true }), true)
      }
      if (files.length < ANALYSIS_BATCH) break
      after = files[files.length - 1]!
    }
  }
  return done
}

/**
 * Consecutive files in groups of about `tests` tests, a larger file alone: a claim of a group looks at its tests
 * only, so claiming a page of files costs its tests once, not once per chunk.
 */
function fileGroups(files: readonly RunFile[], tests: number): RunFile[][] {
  const groups: RunFile[][] = []
  let current: RunFile[] = []
  let size = 0
  for (const f of files) {
    if (current.length > 0 && size + f.tests > tests) {
      groups.push(current)
      current = []
      size = 0
    }
    current.push(f)
    size += f.tests
  }
  if (current.length > 0) groups.push(current)
  return groups
}

/**
 * Most rows of file-mates one chunk claims besides its own: a file of 100,000 ordered tests is then read 20 times
 * while it is refreshed, and a chunk ends soon enough for the server that runs it to stop without a long wait.
 */
const MATE_CLAIMS = 5_000

/**
 * Analyses the claimed rows and writes them, a chunk at a time. The due rows of the file-mates read for their
 * order hints are claimed too (before their histories are read, as the claim protocol requires) and written from
 * the same analysis: a file of 3,000 ordered tests is then read once, not once per chunk of its tests.
 */
async function refreshClaims(
  store: Store,
  cfg: ResolvedAnalysisConfig,
  { config, clock, results }: { config: string; clock: number; results: number | undefined },
  claims: AnalysisClaim[],
): Promise<{ claimed: number; written: number }> {
  const mateClaims: AnalysisClaim[] = []
  const group = await analyzeTestsInParts(
    store,
    cfg,
    { clock, results },
    claims.map((c) => c.testId),
    async (mates) => {
      for (let i = 0; i < mates.length && mateClaims.length < MATE_CLAIMS; i += ANALYSIS_BATCH) {
        const batch = mates.slice(i, i + ANALYSIS_BATCH)
        const claimed = await store.analyses().claimAnalyses({ clock, limit: batch.length, testIds: batch, config })
        appendAll(mateClaims, claimed)
      }
    },
  )
  // Written a chunk at a time: only a chunk's JSON is held at once, however many mates a file has.
  const write = async (part: AnalysisClaim[]) => {
    let n = 0
    for (let i = 0; i < part.length; i += ANALYSIS_BATCH) {
      const rows = part.slice(i, i + ANALYSIS_BATCH).map((c) => persistedRow(c, group.get(c.testId), config, clock))
      n += await store.analyses().writeAnalyses(rows)
    }
    return n
  }
  const written = await write(claims)
  // The mates were claimed after the claimed tests' own histories were read: a write of results in between would
  // make their analyses stale, unseen by their versions. It marked the whole file, the claimed tests' rows too, so
  // one of those failed to be written: then the mates are not written, and their leases end now. A mate claimed
  // after that write is stale at a version the write's own refresh must be able to claim (a test the upload added
  // to the file): left leased, the upload would be answered before its row was analysed.
  if (written < claims.length) {
    await store.analyses().releaseClaims(mateClaims)
    return { claimed: mateClaims.length, written }
  }
  return { claimed: mateClaims.length, written: written + (await write(mateClaims)) }
}

/** The row of a claimed test: its analysis, or, with no results any more (pruned), a row saying so for good. */
function persistedRow(
  c: AnalysisClaim,
  found: GroupAnalysis | undefined,
  config: string,
  clock: number,
): PersistedAnalysis {
  if (found === undefined) {
    return { ...c, analysis: null, config, asOf: clock, validFrom: VALID_EVER_FROM, validUntil: VALID_EVER_UNTIL }
  }
  const a = found.analysis
  return {
    ...c,
    analysis: {
      json: JSON.stringify(toAnalysisJson(a)),
      summary: {
        verdict: a.verdict,
        score: a.score,
        flipRate: a.flipRate,
        flipRateClass: a.flipRateClass,
        runs: a.runs,
        failures: a.failures,
        passRate: a.passRate,
        lastStatus: a.lastStatus,
        lastFailureAt: a.lastFailureAt,
        firstRunAt: a.firstRunAt,
        lastRunAt: a.lastRunAt,
        passRateClass: a.passRateClass,
        timeLostMs: a.timeLostMs,
        ...found.facts,
      },
    },
    config,
    asOf: clock,
    validFrom: found.validity.from,
    validUntil: found.validity.until,
  }
}

/**
 * Tests an upload's writer re-analyses before it answers (`flakewatch ingest` has no one waiting). A report of 120,000 tests would otherwise hold its upload's 201
 * for minutes (about 400 tests a second on a loaded machine); the rest stay stale, which the sweep and `analyze`
 * (reading stale rows from their histories) both handle.
 */
export const REFRESH_BEFORE_ANSWER_ROWS = 2_000

/**
 * A writer's part, just after its commit: re-analyses the rows its runs marked stale. A failure here loses nothing
 * (the rows stay stale, and the sweep or the next reader analyses them), so it is returned as a warning instead of
 * failing the write that committed.
 * @example const warning = await refreshAfterWrite(store, analysisOptions(config), ['r1'])
 */
export async function refreshAfterWrite(
  store: Store,
  analysis: AnalysisConfigOptions,
  runIds: string[],
  maxRows?: number,
): Promise<string | null> {
  if (runIds.length === 0) return null
  try {
    await refreshAnalyses(store, resolveAnalysisConfig(analysis), { runIds, ...(maxRows ? { maxRows } : {}) })
    return null
  } catch (error) {
    return refreshWarning(error)
  }
}

/** The warning a writer gives when its refresh failed: its report is stored, its rows wait for the sweep. */
export function refreshWarning(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return `the stored analyses of this report's tests were not refreshed (the sweep will): ${message}`
}

/** Share of a selection's tests that may lack an exact row before a full scan is cheaper than reading by index. */
const MOST_MISSING_SHARE = 0.2

/** Tests analysed afresh at a time by `forEachPersistedAnalysis`, with their file-mates. */
const MISSING_CHUNK = 500

export interface PersistedAnalysisHandlers {
  /** A row exact at the clock: its JSON, as `analyze --json` prints it (without owners). */
  exact(row: AnalysisRead & { json: string }): void
  /** A test without an exact row, analysed afresh from its file's histories (order hints included). */
  analysed(analysis: TestAnalysis): void
}

/**
 * Every test's analysis at `clock` (of `suite`, if given), from the persisted rows that are exact there and, for
 * the others, from their files' histories read by index. Returns false without calling anything when too many
 * tests lack an exact row (or the clock is not a whole millisecond): the caller scans instead.
 * @example if (!(await forEachPersistedAnalysis(store, cfg, { clock }, handlers))) await forEachAnalysis(…)
 */
export async function forEachPersistedAnalysis(
  store: Store,
  cfg: ResolvedAnalysisConfig,
  opts: { clock: number; suite?: string },
  handlers: PersistedAnalysisHandlers,
): Promise<boolean> {
  if (!Number.isSafeInteger(opts.clock)) return false
  const analyses = store.analyses()
  const read = { clock: opts.clock, config: analysisFingerprint(cfg), suite: opts.suite }
  const { tests, exact } = await analyses.countExact(read)
  if (tests === 0 || tests - exact > tests * MOST_MISSING_SHARE) return false
  let missing: string[] = []
  const flush = async () => {
    if (missing.length === 0) return
    const wanted = new Set(missing)
    missing = []
    const group = await analyzeTestsInParts(store, cfg, { clock: opts.clock }, [...wanted])
    for (const [testId, g] of group) if (wanted.has(testId)) handlers.analysed(g.analysis)
  }
  for await (const row of analyses.readAnalyses(read)) {
    if (!row.exact) missing.push(row.testId)
    else if (row.json !== null) handlers.exact(row as AnalysisRead & { json: string })
    if (missing.length >= MISSING_CHUNK) await flush()
  }
  await flush()
  return true
}
