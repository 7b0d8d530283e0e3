/**
 * Orchestrates self-healing: learn an element when an action on it succeeds, decide whether a broken locator can
 * be healed, and log every heal. Knows nothing of Playwright beyond the two page methods in `HealPage`.
 */
import { ConfigError, FlakewatchError } from '../errors.js'
import type { HealRecord, Store } from '../store/store.js'
import { DEFAULT_DESCRIBE, rankPageFunction } from './fingerprint.js'
import type { Capture, DescribeOptions, LocatorSuggestion, PageCandidate, RankArgs, RankResult } from './fingerprint.js'
import { actionConflict, sameIntent } from './intent.js'
import {
  DEFAULT_MARGIN,
  DEFAULT_THRESHOLD,
  DEFAULT_WEIGHTS,
  RANK_LIMIT,
  anchoredTo,
  decideHeal,
  scoreCandidate,
  toSignals,
  vetoFloor,
  weightsAcross,
} from './similarity.js'
import type { Breakdown, ElementFingerprint, RefusalRule, Signal, Weights } from './similarity.js'

/** The part of the store that healing uses. Depend on this, not on `Store`, so that any backend fits. */
export type HealStore = Pick<Store, 'putFingerprint' | 'getFingerprint' | 'appendHeal' | 'listHeals'>

/** Where heal warnings go. Defaults to `console.warn`. */
export interface HealLogger {
  warn(message: string): void
}

/** The page surface healing needs. A Playwright `Page` fits. */
export interface HealPage {
  evaluate<R, Arg>(pageFunction: (arg: Arg) => R, arg: Arg): Promise<R>
  url(): string
}

/** Heal tuning, settable per wrapper and per call. */
export interface HealSettings {
  /** Minimum score of the best candidate, in [0, 1]. Default 0.6 (`DEFAULT_THRESHOLD`). */
  threshold?: number
  /** Minimum lead of the best candidate over every other, with and without position, in [0, 1]. Default 0.1. */
  margin?: number
  /** Signal weights; missing ones keep their default. */
  weights?: Partial<Weights>
  /** The attribute `getByTestId` reads. Default `data-testid`. */
  testIdAttribute?: string
  /** Candidates listed when a heal is refused. Default 5. */
  report?: number
}

export interface ResolvedHealSettings {
  threshold: number
  margin: number
  weights: Weights
  describe: DescribeOptions
  report: number
}

/**
 * Merges settings layers, later ones winning, over the defaults, and validates the result.
 * @example resolveHealSettings({ threshold: 0.6 }, { margin: 0.2 }) // { threshold: 0.6, margin: 0.2, ... }
 */
export function resolveHealSettings(...layers: Array<HealSettings | undefined>): ResolvedHealSettings {
  const merged: HealSettings = {}
  const weights: Weights = { ...DEFAULT_WEIGHTS }
  for (const layer of layers) {
    if (!layer) continue
    for (const [k, v] of Object.entries(layer) as Array<[keyof HealSettings, unknown]>) {
      if (v !== undefined && k !== 'weights') Object.assign(merged, { [k]: v })
    }
    for (const [k, v] of Object.entries(layer.weights ?? {})) if (v !== undefined) weights[k as Signal] = v
  }
  const resolved: ResolvedHealSettings = {
    threshold: merged.threshold ?? DEFAULT_THRESHOLD,
    margin: merged.margin ?? DEFAULT_MARGIN,
    weights,
    describe: { ...DEFAULT_DESCRIBE, testIdAttribute: merged.testIdAttribute ?? DEFAULT_DESCRIBE.testIdAttribute },
    report: merged.report ?? 5,
  }
  const issues: string[] = []
  const unit = (name: string, v: number) => {
    if (!(v >= 0 && v <= 1)) issues.push(`heal.${name}: must be between 0 and 1, got ${v}`)
  }
  unit('threshold', resolved.threshold)
  unit('margin', resolved.margin)
  for (const [k, v] of Object.entries(weights)) {
    if (!(v >= 0) || !Number.isFinite(v)) issues.push(`heal.weights.${k}: must be a finite number >= 0, got ${v}`)
  }
  if (!(Number.isInteger(resolved.report) && resolved.report >= 2)) {
    issues.push(`heal.report: must be an integer >= 2, got ${resolved.report}`)
  }
  if (!resolved.describe.testIdAttribute) issues.push('heal.testIdAttribute: must not be empty')
  if (issues.length > 0) throw new ConfigError(issues)
  return resolved
}

/**
 * Why a heal was refused: the rule's reasons; `unchanged` when the best match is the element already found;
 * `mis-resolved` when the locator finds an element that is clearly not the learned one and nothing better qualifies.
 */
export type RefusalReason = RefusalRule | 'unchanged' | 'mis-resolved'

/** Why a heal happened: the locator found nothing, found several elements, or found the wrong one. */
export type HealCause = 'missing' | 'strict-mode' | 'mis-resolved'

/**
 * A found element at or above this score, doing the same thing as the learned one, is the learned element:
 * it is acted on and its fingerprint refreshed. Below it, the page is searched for a better match first.
 */
export const CONFIDENT_MATCH = 0.8

/** How a found element compares with the learned one. */
export interface MatchCheck {
  score: number
  breakdown: Breakdown
  /** What says it does something else, or null. */
  conflict: string | null
  /** `confident`: the learned element; `doubtful`: look for a better one; `mismatch`: not the learned element. */
  verdict: 'confident' | 'doubtful' | 'mismatch'
}

/**
 * Compares the element a locator found with the learned one. A conflict (another action, field, form or row) or
 * a score below the threshold is a mismatch; a lower score than `CONFIDENT_MATCH`, a doubt.
 * @example checkMatch(learned, found, settings).verdict // 'confident'
 */
export function checkMatch(
  learned: ElementFingerprint,
  found: ElementFingerprint,
  s: ResolvedHealSettings,
): MatchCheck {
  const scored = scoreCandidate(toSignals(learned), toSignals(found), weightsAcross(learned, found, s.weights))
  const conflict = actionConflict(learned, found)
  const verdict =
    scored.score < s.threshold || (conflict !== null && !conflict.startsWith('belongs to another row'))
      ? 'mismatch'
      : conflict !== null || scored.score < CONFIDENT_MATCH
        ? 'doubtful'
        : 'confident'
  return { score: scored.score, breakdown: scored.breakdown, conflict, verdict }
}

export interface HealRequest {
  testId: string
  /** The locator as written in the test, the key of its fingerprint. */
  locator: string
  runId?: string | null
  settings: ResolvedHealSettings
  /**
   * Selector of the element the locator still resolves to, when it does (the action failed for another reason):
   * healing onto that same element cannot help.
   */
  currentSelector?: string | null
  /** What happened to the locator. Default `missing`. */
  cause?: HealCause
  /** Confirms a suggestion with the real locator engine; rejected ones are skipped. */
  verify?: (suggestion: LocatorSuggestion, selector: string) => Promise<boolean>
  /** True when this same heal was already logged (the same locator healed the same way earlier in the test). */
  alreadyLogged?: (record: HealRecord) => boolean
}

export type HealOutcome =
  | {
      status: 'healed'
      record: HealRecord
      /** A selector to act on the healed element now. */
      selector: string
      suggestion: LocatorSuggestion
      rank: RankResult
      cause: HealCause
    }
  | { status: 'refused'; reason: RefusalReason; rank: RankResult; summary: string; learned: ElementFingerprint }
  | { status: 'unlearned' }

export interface Healer {
  /**
   * Remembers the element a locator found, for this test. A changed element replaces the stored one, which moves
   * into its history (the last `FINGERPRINT_HISTORY`).
   */
  learn(testId: string, locator: string, fingerprint: ElementFingerprint): Promise<void>
  /** The learned element of a locator, or null. */
  learned(testId: string, locator: string): Promise<ElementFingerprint | null>
  /** Ranks the page against the learned element and, when the heal rule allows, records the heal. Never acts. */
  heal(page: HealPage, request: HealRequest): Promise<HealOutcome>
  /**
   * Picks, among the elements a locator matches (a strict-mode violation), the learned one by the heal rule.
   * Records the heal. Never acts.
   */
  choose(page: HealPage, request: HealRequest, matches: readonly Capture[]): Promise<HealOutcome>
}

export interface HealerDeps {
  store: HealStore
  logger?: HealLogger
  now?: () => Date
}

/**
 * A heal was needed and refused. Carries the original error as `cause` (when there was one), the action the test
 * called (`locator.click`), the ranked candidates and the learned element.
 */
export class HealRefusedError extends FlakewatchError {
  readonly code: string = 'FW_HEAL_REFUSED'
  constructor(
    readonly locator: string,
    readonly reason: RefusalReason,
    readonly candidates: PageCandidate[],
    message: string,
    opts?: ErrorOptions & { action?: string; learned?: ElementFingerprint | null },
  ) {
    super(message, opts)
    this.action = opts?.action ?? null
    this.learned = opts?.learned ?? null
  }
  /** The Playwright call that failed, e.g. `locator.click`. */
  readonly action: string | null
  readonly learned: ElementFingerprint | null
}

/**
 * The locator found an element, but not the learned one (a silent mis-resolution), and no element on the page
 * qualifies as the learned one. Carries both fingerprints.
 */
export class HealMismatchError extends HealRefusedError {
  override readonly code = 'FW_HEAL_MISMATCH'
  constructor(
    locator: string,
    candidates: PageCandidate[],
    readonly found: ElementFingerprint,
    readonly check: MatchCheck,
    message: string,
    opts: { action?: string; learned: ElementFingerprint },
  ) {
    super(locator, 'mis-resolved', candidates, message, opts)
  }
}

const FINGERPRINT_VERSION = 2

/** Earlier versions of a learned element kept with it, newest first. */
export const FINGERPRINT_HISTORY = 5

interface StoredFingerprint {
  v: number
  element: ElementFingerprint
  /** Earlier elements, newest first, with the time each was replaced. */
  history?: Array<{ element: ElementFingerprint; replacedAt: string }>
}

/** Reads a stored fingerprint's `data` (this version or the first), or null when it is not one. */
export function readFingerprint(data: unknown): ElementFingerprint | null {
  if (typeof data !== 'object' || data === null) return null
  const { v, element } = data as Partial<StoredFingerprint>
  if ((v !== FINGERPRINT_VERSION && v !== 1) || typeof element !== 'object' || element === null) return null
  return validElement(element)
}

/**
 * The earlier elements of a stored fingerprint, newest first.
 * @example readHistory((await store.getFingerprint(testId, key))!.data).length // <= FINGERPRINT_HISTORY
 */
export function readHistory(data: unknown): Array<{ element: ElementFingerprint; replacedAt: string }> {
  if (typeof data !== 'object' || data === null) return []
  const history = (data as Partial<StoredFingerprint>).history
  if (!Array.isArray(history)) return []
  return history.flatMap((h: unknown) => {
    const entry = h as { element?: unknown; replacedAt?: unknown }
    const element = typeof entry?.element === 'object' ? validElement(entry.element) : null
    return element && typeof entry.replacedAt === 'string' ? [{ element, replacedAt: entry.replacedAt }] : []
  })
}

function validElement(element: object | null): ElementFingerprint | null {
  if (element === null) return null
  const e = element as Partial<ElementFingerprint>
  const strings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string')
  const ok =
    typeof e.tag === 'string' &&
    typeof e.id === 'string' &&
    typeof e.text === 'string' &&
    strings(e.classes) &&
    typeof e.attrs === 'object' &&
    e.attrs !== null &&
    strings(e.path) &&
    strings(e.siblings) &&
    (e.box === null || typeof e.box === 'object') &&
    (e.testId === null || typeof e.testId === 'string') &&
    (e.role === undefined || typeof e.role === 'string') &&
    (e.name === undefined || typeof e.name === 'string') &&
    (e.context === undefined || (typeof e.context === 'object' && e.context !== null)) &&
    (e.lang === undefined || typeof e.lang === 'string')
  return ok ? (e as ElementFingerprint) : null
}

/** Whether two descriptions of an element differ in more than layout: a box that moved is not news. */
function sameElement(a: ElementFingerprint, b: ElementFingerprint): boolean {
  return JSON.stringify({ ...a, box: null }) === JSON.stringify({ ...b, box: null })
}

/**
 * A JavaScript single-quoted string literal, as a test author would write it: the quoting of locator keys and
 * suggested locators alike.
 * @example jsString("it's") // "'it\\'s'"
 */
export function jsString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`
}

/** A CSS selector for an id: `#pay` when the id is a plain identifier, an attribute selector otherwise. */
export function idSelector(id: string): string {
  return /^[A-Za-z_][\w-]*$/.test(id) ? `#${id}` : `[id="${id.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"]`
}

/**
 * The Playwright code for a suggestion, ready to paste into a test.
 * @example locatorCode({ kind: 'testid', value: 'pay' }) // "getByTestId('pay')"
 */
export function locatorCode(s: LocatorSuggestion): string {
  switch (s.kind) {
    case 'testid':
      return `getByTestId(${jsString(s.value)})`
    case 'id':
      return `locator(${jsString(idSelector(s.value))})`
    case 'role':
      return `getByRole(${jsString(s.role)}, { name: ${jsString(s.name)}, exact: true })`
    case 'label':
      return `getByLabel(${jsString(s.value)}, { exact: true })`
    case 'text':
      return `getByText(${jsString(s.value)}, { exact: true })`
    case 'css':
      return `locator(${jsString(s.value)})`
    case 'row':
      return (
        `getByRole(${jsString(s.row)}).filter({ has: page.getByText(${jsString(s.key)}, { exact: true }) })` +
        `.getByRole(${jsString(s.role)}, { name: ${jsString(s.name)}, exact: true })`
      )
  }
}

function formatBreakdown(b: Breakdown): string {
  return Object.entries(b)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ')
}

/** A table of candidates for error messages: score, element, state, signals and why it may not be used. */
export function formatCandidates(candidates: readonly (PageCandidate & { conflict?: string | null })[]): string {
  if (candidates.length === 0) return '  (no elements in the page)'
  return candidates
    .map((c) => {
      const state = [c.visible ? '' : 'hidden', c.enabled ? '' : 'disabled'].filter(Boolean).join(', ')
      const head = `  ${c.score.toFixed(2)}  ${c.description}${state ? ` [${state}]` : ''}`
      const veto = c.conflict ? `\n        not used: it ${c.conflict}` : ''
      return `${head}\n        ${formatBreakdown(c.breakdown)}${veto}`
    })
    .join('\n')
}

/** An element description for messages: `button "Delete" in row 'alice', form 'Checkout'`. */
export function describeFingerprint(fp: ElementFingerprint): string {
  let s = fp.tag
  if (fp.id) s += `#${fp.id}`
  if (fp.testId) s += `[testid=${fp.testId}]`
  const name = fp.name || fp.text
  if (name) s += ` "${name.length > 40 ? name.slice(0, 39) + '…' : name}"`
  const where: string[] = []
  if (fp.context?.item) where.push(fp.context.item.replace('|', " '") + "'")
  if (fp.context?.form) {
    const [id, , , label] = fp.context.form.split('|')
    where.push(label ? `form '${label}'` : id ? `form#${id}` : 'a form')
  }
  if (fp.context?.region)
    where.push(fp.context.region.replace('|', " '") + (fp.context.region.endsWith('|') ? '' : "'"))
  return where.length > 0 ? `${s} in ${where.join(', ')}` : s
}

const REASONS: Record<RefusalReason, (s: ResolvedHealSettings) => string> = {
  'no-candidates': () => 'the page has no elements to compare',
  'below-threshold': (s) => `no candidate reaches the threshold ${s.threshold}`,
  hidden: () => 'the best candidate is hidden',
  disabled: () => 'the best candidate is disabled',
  ambiguous: (s) => `the best candidate does not lead the others by the margin ${s.margin}`,
  'different-action': () => 'every candidate that reaches the threshold does something else than the learned element',
  unchanged: () => 'the best candidate is the element the locator already finds; the action failed for another reason',
  'mis-resolved': () => 'the locator finds another element than the learned one, and no element qualifies instead',
}

/**
 * A candidate whose name says the same action as the learned one (`Delete` and a trash icon, `Log in` and `Sign
 * in`) gets full marks for its name: the in-page text similarity cannot see synonyms.
 */
function liftIntent<C extends PageCandidate>(learned: ElementFingerprint, c: C, weights: Weights): C {
  const name = c.breakdown.name
  if (name === undefined || name >= 1 || !sameIntent(learned.name ?? '', c.fingerprint.name ?? '')) return c
  let sum = 0
  let total = 0
  const breakdown: Breakdown = { ...c.breakdown, name: 1 }
  for (const [k, v] of Object.entries(breakdown)) {
    if (v === undefined) continue
    sum += weights[k as Signal] * v
    total += weights[k as Signal]
  }
  return { ...c, breakdown, score: total > 0 ? sum / total : 0 }
}

/**
 * Creates the healer for a store.
 * @example const healer = createHealer({ store, logger: { warn: (m) => log.push(m) } })
 */
export function createHealer(deps: HealerDeps): Healer {
  const logger = deps.logger ?? { warn: (m: string) => console.warn(m) }
  const now = deps.now ?? (() => new Date())

  async function learn(testId: string, locator: string, fingerprint: ElementFingerprint): Promise<void> {
    const stored = await deps.store.getFingerprint(testId, locator)
    const previous = stored ? readFingerprint(stored.data) : null
    if (previous && sameElement(previous, fingerprint)) return
    const at = now().toISOString()
    const history = previous
      ? [{ element: previous, replacedAt: at }, ...readHistory(stored!.data)].slice(0, FINGERPRINT_HISTORY)
      : []
    const data: StoredFingerprint = { v: FINGERPRINT_VERSION, element: fingerprint, history }
    await deps.store.putFingerprint({ testId, locator, data, updatedAt: at })
  }

  async function learned(testId: string, locator: string): Promise<ElementFingerprint | null> {
    const stored = await deps.store.getFingerprint(testId, locator)
    return stored ? readFingerprint(stored.data) : null
  }

  /** The candidates with what says each does something else. */
  function vet(fingerprint: ElementFingerprint, rank: RankResult, weights: Weights): RankResult {
    const candidates = rank.candidates
      .map((c) => ({
        ...liftIntent(fingerprint, c, weights),
        conflict: actionConflict(fingerprint, c.fingerprint),
        anchored: anchoredTo(fingerprint, c.fingerprint),
      }))
      .sort((a, b) => b.score - a.score)
    return { ...rank, candidates }
  }

  async function decide(
    page: HealPage,
    req: HealRequest,
    fingerprint: ElementFingerprint,
    rank: RankResult,
  ): Promise<HealOutcome> {
    const cause = req.cause ?? 'missing'
    const decision = decideHeal(rank.candidates, { ...req.settings, weights: rank.weights })
    const shown = rank.candidates.slice(0, req.settings.report)
    const refuse = (reason: RefusalReason): HealOutcome => ({
      status: 'refused',
      reason,
      rank: { ...rank, candidates: shown },
      learned: fingerprint,
      summary:
        `flakewatch could not heal ${req.locator}: ${REASONS[reason](req.settings)}.\n` +
        `Learned: ${describeFingerprint(fingerprint)}\n` +
        `Top candidates:\n${formatCandidates(shown)}`,
    })
    if (!decision.heal) return refuse(decision.reason)
    const best = decision.best
    if (req.currentSelector && req.currentSelector === best.selector) return refuse('unchanged')

    let suggestion: LocatorSuggestion = { kind: 'css', value: best.selector }
    for (const s of best.suggestions ?? (best === rank.candidates[0] ? rank.suggestions : [])) {
      if (!req.verify || (await req.verify(s, best.selector))) {
        suggestion = s
        break
      }
    }
    const breakdown: Record<string, number> = {}
    for (const [k, v] of Object.entries(best.breakdown)) if (v !== undefined) breakdown[k] = v
    const record: HealRecord = {
      testId: req.testId,
      oldLocator: req.locator,
      newLocator: locatorCode(suggestion),
      score: best.score,
      breakdown,
      url: page.url() || null,
      at: now().toISOString(),
      runId: req.runId ?? null,
    }
    const healed: HealOutcome = { status: 'healed', record, selector: best.selector, suggestion, rank, cause }
    if (req.alreadyLogged?.(record)) return healed
    await deps.store.appendHeal(record)
    const lead = decision.runnerUp ? `, runner-up ${decision.runnerUp.score.toFixed(2)}` : ''
    const why =
      cause === 'strict-mode'
        ? ' (it matched several elements)'
        : cause === 'mis-resolved'
          ? ' (it found another element than the learned one)'
          : ''
    logger.warn(
      `flakewatch: healed ${record.oldLocator}${why} → ${record.newLocator} in ${req.testId} ` +
        `(score ${best.score.toFixed(2)}${lead}: ${formatBreakdown(best.breakdown)}). Update the test.`,
    )
    return healed
  }

  async function heal(page: HealPage, req: HealRequest): Promise<HealOutcome> {
    const fingerprint = await learned(req.testId, req.locator)
    if (!fingerprint) return { status: 'unlearned' }
    const args: RankArgs = {
      fingerprint,
      weights: req.settings.weights,
      options: req.settings.describe,
      // Every candidate that could heal or stand within the margin of one that can reaches the veto: the decision
      // never depends on how many candidates a refusal lists (`report`).
      limit: RANK_LIMIT,
      keep: req.settings.report,
      floor: vetoFloor(req.settings),
    }
    const ranked = await page.evaluate(rankPageFunction, args)
    const rank = vet(fingerprint, ranked, ranked.weights)
    return decide(page, req, fingerprint, rank)
  }

  async function choose(page: HealPage, req: HealRequest, matches: readonly Capture[]): Promise<HealOutcome> {
    const fingerprint = await learned(req.testId, req.locator)
    if (!fingerprint) return { status: 'unlearned' }
    const fp = toSignals(fingerprint)
    const weights = weightsAcross(fingerprint, matches[0]?.fingerprint ?? {}, req.settings.weights)
    const candidates = matches
      .map((m) => {
        const scored = scoreCandidate(fp, toSignals(m.fingerprint), weights)
        return {
          score: scored.score,
          breakdown: scored.breakdown,
          visible: m.visible ?? true,
          enabled: m.enabled ?? true,
          selector: m.selector,
          description: describeFingerprint(m.fingerprint),
          fingerprint: m.fingerprint,
          suggestions: m.suggestions,
        }
      })
      .sort((a, b) => b.score - a.score)
    const rank: RankResult = { candidates, suggestions: [], weights, scanned: matches.length, elapsedMs: 0 }
    const outcome = await decide(page, { ...req, cause: 'strict-mode' }, fingerprint, vet(fingerprint, rank, weights))
    return outcome
  }

  return { learn, learned, heal, choose }
}
