/**
 * Orchestrates self-healing: learn an element when an action on it succeeds, decide whether a broken locator can
 * be healed, and log every heal. Knows nothing of Playwright beyond the two page methods in `HealPage`.
 */
import { ConfigError, FlakewatchError } from '../errors.js'
import type { HealRecord, Store } from '../store/store.js'
import { DEFAULT_DESCRIBE, rankPageFunction } from './fingerprint.js'
import type { DescribeOptions, LocatorSuggestion, PageCandidate, RankArgs, RankResult } from './fingerprint.js'
import { DEFAULT_MARGIN, DEFAULT_THRESHOLD, DEFAULT_WEIGHTS, decideHeal } from './similarity.js'
import type { Breakdown, ElementFingerprint, HealDecision, Signal, Weights } from './similarity.js'

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
  /** Minimum score of the best candidate, in [0, 1]. Default 0.5. */
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

/** Why a heal was refused: the rule's reasons, or `unchanged` when the best match is the element already found. */
export type RefusalReason = Exclude<HealDecision, { heal: true }>['reason'] | 'unchanged'

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
    }
  | { status: 'refused'; reason: RefusalReason; rank: RankResult; summary: string }
  | { status: 'unlearned' }

export interface Healer {
  /** Remembers the element a locator found, for this test. */
  learn(testId: string, locator: string, fingerprint: ElementFingerprint): Promise<void>
  /** Ranks the page against the learned element and, when the heal rule allows, records the heal. Never acts. */
  heal(page: HealPage, request: HealRequest): Promise<HealOutcome>
}

export interface HealerDeps {
  store: HealStore
  logger?: HealLogger
  now?: () => Date
}

/** A heal was needed and refused. Carries the original error as `cause` and the ranked candidates. */
export class HealRefusedError extends FlakewatchError {
  readonly code = 'FW_HEAL_REFUSED'
  constructor(
    readonly locator: string,
    readonly reason: RefusalReason,
    readonly candidates: PageCandidate[],
    message: string,
    opts?: ErrorOptions,
  ) {
    super(message, opts)
  }
}

const FINGERPRINT_VERSION = 1

interface StoredFingerprint {
  v: number
  element: ElementFingerprint
}

/** Reads a stored fingerprint's `data`, or null when it is not one this version understands. */
export function readFingerprint(data: unknown): ElementFingerprint | null {
  if (typeof data !== 'object' || data === null) return null
  const { v, element } = data as Partial<StoredFingerprint>
  if (v !== FINGERPRINT_VERSION || typeof element !== 'object' || element === null) return null
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
    (e.testId === null || typeof e.testId === 'string')
  return ok ? (e as ElementFingerprint) : null
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
    case 'css':
      return `locator(${jsString(s.value)})`
  }
}

function formatBreakdown(b: Breakdown): string {
  return Object.entries(b)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ')
}

/** A table of candidates for error messages: score, element, state and signals. */
export function formatCandidates(candidates: readonly PageCandidate[]): string {
  if (candidates.length === 0) return '  (no elements in the page)'
  return candidates
    .map((c) => {
      const state = [c.visible ? '' : 'hidden', c.enabled ? '' : 'disabled'].filter(Boolean).join(', ')
      const head = `  ${c.score.toFixed(2)}  ${c.description}${state ? ` [${state}]` : ''}`
      return `${head}\n        ${formatBreakdown(c.breakdown)}`
    })
    .join('\n')
}

const REASONS: Record<RefusalReason, (s: ResolvedHealSettings) => string> = {
  'no-candidates': () => 'the page has no elements to compare',
  'below-threshold': (s) => `no candidate reaches the threshold ${s.threshold}`,
  hidden: () => 'the best candidate is hidden',
  disabled: () => 'the best candidate is disabled',
  ambiguous: (s) => `the best candidate does not lead the others by the margin ${s.margin}`,
  unchanged: () => 'the best candidate is the element the locator already finds; the action failed for another reason',
}

/**
 * Creates the healer for a store.
 * @example const healer = createHealer({ store, logger: { warn: (m) => log.push(m) } })
 */
export function createHealer(deps: HealerDeps): Healer {
  const logger = deps.logger ?? { warn: (m: string) => console.warn(m) }
  const now = deps.now ?? (() => new Date())

  async function learn(testId: string, locator: string, fingerprint: ElementFingerprint): Promise<void> {
    const data: StoredFingerprint = { v: FINGERPRINT_VERSION, element: fingerprint }
    await deps.store.putFingerprint({ testId, locator, data, updatedAt: now().toISOString() })
  }

  async function heal(page: HealPage, req: HealRequest): Promise<HealOutcome> {
    const stored = await deps.store.getFingerprint(req.testId, req.locator)
    const fingerprint = stored ? readFingerprint(stored.data) : null
    if (!fingerprint) return { status: 'unlearned' }
    const args: RankArgs = {
      fingerprint,
      weights: req.settings.weights,
      options: req.settings.describe,
      limit: req.settings.report,
    }
    const rank = await page.evaluate(rankPageFunction, args)
    const decision = decideHeal(rank.candidates, req.settings)
    const refuse = (reason: RefusalReason): HealOutcome => ({
      status: 'refused',
      reason,
      rank,
      summary:
        `flakewatch could not heal ${req.locator}: ${REASONS[reason](req.settings)}.\n` +
        `Top candidates:\n${formatCandidates(rank.candidates)}`,
    })
    if (!decision.heal) return refuse(decision.reason)
    const best = decision.best
    if (req.currentSelector && req.currentSelector === best.selector) return refuse('unchanged')

    let suggestion: LocatorSuggestion = { kind: 'css', value: best.selector }
    for (const s of rank.suggestions) {
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
    if (req.alreadyLogged?.(record)) return { status: 'healed', record, selector: best.selector, suggestion, rank }
    await deps.store.appendHeal(record)
    const lead = decision.runnerUp ? `, runner-up ${decision.runnerUp.score.toFixed(2)}` : ''
    logger.warn(
      `flakewatch: healed ${record.oldLocator} → ${record.newLocator} in ${req.testId} ` +
        `(score ${best.score.toFixed(2)}${lead}: ${formatBreakdown(best.breakdown)}). Update the test.`,
    )
    return { status: 'healed', record, selector: best.selector, suggestion, rank }
  }

  return { learn, heal }
}
