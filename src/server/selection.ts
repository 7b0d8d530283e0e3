import { z } from 'zod'
import { InputError } from '../errors.js'
import type { EnvFacets, Run } from '../model.js'
import type { Store } from '../store/store.js'
import { zodMessage } from './error-handler.js'
import { maxOf, minOf } from '../extent.js'

const DAY_MS = 86_400_000

/** The largest `last` a request may ask for. */
export const MAX_LAST_RUNS = 5000

/** A normalised run selection: the part of a request that decides which results the analysis sees. */
export interface Selection {
  suite?: string
  branch?: string
  /** `[key, value]` pairs, sorted, each of which a run's env must match. */
  env: [string, string][]
  last?: number
  rev?: { from: string; to: string }
}

const text = z.string().trim().min(1).max(500)

const envParam = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v, ctx): [string, string][] => {
    const pairs: [string, string][] = []
    for (const item of v === undefined ? [] : Array.isArray(v) ? v : [v]) {
      if (item === '') continue
      const eq = item.indexOf('=')
      if (eq <= 0) {
        ctx.addIssue({ code: 'custom', message: `expected key=value, got "${item}"` })
        return z.NEVER
      }
      pairs.push([item.slice(0, eq).trim(), item.slice(eq + 1).trim()])
    }
    return pairs.sort((a, b) => (a[0] === b[0] ? a[1].localeCompare(b[1]) : a[0].localeCompare(b[0])))
  })

/** `abc123...def456` or `abc123..def456`: from the first run of one revision to the last run of the other. */
export const REV_RANGE = /^([^.\s]+)\.{2,3}([^.\s]+)$/

/** The selection's query parameters, shared by every read endpoint that analyses. */
export const selectionShape = {
  suite: text.optional(),
  branch: text.optional(),
  env: envParam,
  last: z.coerce.number().int().min(1).max(MAX_LAST_RUNS).optional(),
  rev: z.string().trim().regex(REV_RANGE, 'expected a revision range such as abc123...def456').optional(),
}

export const SelectionQuery = z.object(selectionShape)

/**
 * Validates `input` with a zod schema, turning failures into one 400 that names each bad parameter.
 * @example const q = parseInput(SelectionQuery, request.query, 'query')
 */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown, where: string): z.output<T> {
  const parsed = schema.safeParse(input ?? {})
  if (!parsed.success) throw new InputError(zodMessage(parsed.error, where))
  return parsed.data
}

export function toSelection(q: z.output<typeof SelectionQuery>): Selection {
  const m = q.rev ? REV_RANGE.exec(q.rev) : null
  return {
    suite: q.suite,
    branch: q.branch,
    env: q.env,
    last: q.last,
    rev: m ? { from: m[1]!, to: m[2]! } : undefined,
  }
}

/** A stable cache key: equal selections give equal keys. */
export function selectionKey(s: Selection): string {
  const rev = s.rev ? [s.rev.from, s.rev.to] : null
  return JSON.stringify([s.suite ?? null, s.branch ?? null, s.env, s.last ?? null, rev])
}

function envMatches(env: EnvFacets, pairs: [string, string][]): boolean {
  for (const [k, v] of pairs) if (env[k] !== v) return false
  return true
}

function revMatches(revision: string | null, prefix: string): boolean {
  return revision !== null && revision.toLowerCase().startsWith(prefix.toLowerCase())
}

/** The time a run sorts by. The store sorts by its start, or by its first upload when the report had no start. */
export function runTime(r: Run): number {
  const started = r.startedAt ? Date.parse(r.startedAt) : NaN
  return Number.isNaN(started) ? Date.parse(r.uploadedAt) : started
}

/**
 * Whether a selection picks results of its own (a branch, env facets, the last N runs, a revision range): no
 * persisted analysis answers it, so it is analysed from its results, over a bounded window of its newest runs.
 */
export function selectsResults(s: Selection): boolean {
  return s.branch !== undefined || s.env.length > 0 || s.last !== undefined || s.rev !== undefined
}

/**
 * The most results a selection of results ({@link selectsResults}) is analysed from: its newest runs while their
 * results add up to this (at least one run). So its cost is bounded whatever the history holds: at 5,000 tests a
 * run, its newest 50 runs.
 */
export const SELECTION_MAX_RESULTS = 250_000

/**
 * The most runs a selection of results reads to find its runs, newest first by the runs' time index (env facets
 * and revisions are matched here, not in SQL): a revision range must lie within the newest this many runs of its
 * suite and branch.
 */
export const SELECTION_MAX_SCANNED_RUNS = 20_000

/** Runs read per page of that walk. */
const RUN_PAGE = 1000

/**
 * The runs a selection names, newest first: suite and branch, env facets, then a revision range, then the newest
 * `last`; without `last` or a revision range, the runs inside the analysis lookback window (ending at `now`, or at
 * the newest run). A selection of results ({@link selectsResults}) reads at most
 * {@link SELECTION_MAX_SCANNED_RUNS} runs to find them; `capped` says whether more may match.
 */
export async function selectRuns(
  store: Store,
  sel: Selection,
  opts: { now?: number; lookbackDays: number },
): Promise<{ runs: Run[]; capped: boolean }> {
  const base = { suite: sel.suite, branch: sel.branch }
  const windowed = sel.last === undefined && sel.rev === undefined
  let since: number | undefined
  if (windowed) {
    // The window ends at the given clock, else at the newest run, as the CLI's analysis does.
    const newest = opts.now === undefined ? (await store.listRuns({ ...base, limit: 1 }))[0] : undefined
    const end = opts.now ?? (newest ? runTime(newest) + 1 : Date.now())
    since = end - opts.lookbackDays * DAY_MS
  }
  if (!selectsResults(sel)) return { runs: await store.listRuns({ ...base, since }), capped: false }
  // Newest first, a page at a time, by the runs' time index: never more than the walk's bound.
  const want = sel.rev === undefined ? (sel.last ?? Infinity) : Infinity
  let runs: Run[] = []
  let read = 0
  let exhausted = false
  while (runs.length < want && read < SELECTION_MAX_SCANNED_RUNS) {
    const limit = Math.min(RUN_PAGE, SELECTION_MAX_SCANNED_RUNS - read)
    const page = await store.listRuns({ ...base, since, limit, offset: read })
    read += page.length
    for (const r of page) if (envMatches(r.env, sel.env)) runs.push(r)
    if (page.length < limit) {
      exhausted = true
      break
    }
  }
  const capped = !exhausted && runs.length < want
  if (sel.rev) {
    const { from, to } = sel.rev
    const where = capped ? ` among the newest ${SELECTION_MAX_SCANNED_RUNS} runs` : ''
    const hits = (prefix: string) => runs.flatMap((r, i) => (revMatches(r.revision, prefix) ? [i] : []))
    const a = hits(from)
    const b = hits(to)
    if (a.length === 0) throw new InputError(`rev: no run of revision "${from}" in this selection${where}`)
    if (b.length === 0) throw new InputError(`rev: no run of revision "${to}" in this selection${where}`)
    // The span from the oldest to the newest run of either revision, so that a reversed range reads as meant.
    const all = [...a, ...b]
    runs = runs.slice(minOf(all), maxOf(all) + 1)
  }
  if (sel.last !== undefined && runs.length > sel.last) runs = runs.slice(0, sel.last)
  return { runs, capped }
}
