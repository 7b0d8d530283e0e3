/**
 * The healing wrapper around a Playwright `Page`. Types come from `@playwright/test` and are erased: at runtime this
 * module only uses the page it is given, so it works with `playwright-core` as well.
 */
import { fileURLToPath } from 'node:url'
import type { Locator, Page } from '@playwright/test'
import { InputError } from '../errors.js'
import type { Capture, LocatorSuggestion } from '../heal/fingerprint.js'
import { captureAllPageFunction, capturePageFunction } from '../heal/fingerprint.js'
import {
  HealMismatchError,
  HealRefusedError,
  checkMatch,
  createHealer,
  describeFingerprint,
  idSelector,
  jsString,
  resolveHealSettings,
} from '../heal/healer.js'
import type {
  HealCause,
  HealLogger,
  HealOutcome,
  HealSettings,
  HealStore,
  Healer,
  MatchCheck,
  ResolvedHealSettings,
} from '../heal/healer.js'
import type { ElementFingerprint } from '../heal/similarity.js'
import type { HealRecord } from '../store/store.js'

// The errors and the in-memory store, for playwright-core users who never load `flakewatch/playwright`.
export { HealMismatchError, HealRefusedError } from '../heal/healer.js'
export type { HealCause, HealLogger, HealSettings, HealStore, RefusalReason } from '../heal/healer.js'
export { createMemoryHealStore } from '../heal/memory-store.js'

export interface HealingPageOptions extends HealSettings {
  store: HealStore
  /** The flakewatch test id (`suite::module::name`) fingerprints and heals are filed under. */
  testId: string
  runId?: string | null
  /** Where heal warnings go. Default `console.warn`. */
  logger?: HealLogger
  /** Called once per distinct heal, as it happens. */
  onHeal?: (record: HealRecord) => void
  /**
   * Longest wait, in ms, for a locator to find its element before a heal is tried. Default 5000. A shorter
   * action timeout wins. When the heal is refused the action keeps waiting for the rest of its own timeout (a
   * slow page is never failed early), then fails once; without an action timeout it waits `probeTimeout` more.
   */
  probeTimeout?: number
  /** False passes every call straight through: no learning, no healing. Default true. */
  enabled?: boolean
  now?: () => Date
}

/** Settings for one locator and those chained from it. */
export interface LocatorHealOptions extends HealSettings {
  /** False turns learning and healing off for this locator. */
  enabled?: boolean
}

export interface HealingState {
  /** True once any locator of this page was healed. */
  readonly healed: boolean
  /** The distinct heals so far, oldest first. */
  readonly heals: readonly HealRecord[]
}

/** A Playwright page whose locators learn and heal. Use it exactly as the page it wraps. */
export type HealingPage = Page & HealingState

interface Session {
  page: Page
  proxy: HealingPage
  healer: Healer
  options: HealingPageOptions
  probeTimeout: number
  heals: HealRecord[]
  /** Locators already checked (and learned when confident) in this page: verification happens once per page. */
  learned: Set<string>
  /** Learned elements read from the store, by locator. */
  fingerprints: Map<string, ElementFingerprint | null>
  /**
   * The heal of each locator healed in this page (a test's lifetime with the fixture), by locator: later calls act
   * on it at once, without the probe's wait, after a cheap check that it is still the learned element.
   */
  healedTo: Map<string, HealedTarget>
  /** Locators healed at least once: their found element is checked on every call, never only on the first. */
  everHealed: Set<string>
}

/** Where a heal led: its verified locator (a suggestion, else the element's CSS path) and that CSS path. */
interface HealedTarget {
  suggestion: LocatorSuggestion
  selector: string
}

interface LocatorState {
  session: Session
  target: Locator
  /** The locator as written, e.g. `getByRole('button', { name: 'Pay' })`: the fingerprint key. */
  key: string
  overrides: LocatorHealOptions
  settings: ResolvedHealSettings
  enabled: boolean
}

const LOCATOR_FACTORIES = new Set([
  'locator',
  'getByRole',
  'getByText',
  'getByLabel',
  'getByPlaceholder',
  'getByTestId',
  'getByAltText',
  'getByTitle',
])

const CHAINS = new Set([...LOCATOR_FACTORIES, 'first', 'last', 'nth', 'filter', 'and', 'or', 'visible', 'within'])

/** Actions and reads that need exactly one element: learned on success, healed when the element is missing. */
const ELEMENT_ACTIONS = new Set([
  'click',
  'dblclick',
  'fill',
  'check',
  'uncheck',
  'setChecked',
  'press',
  'pressSequentially',
  'type',
  'selectOption',
  'selectText',
  'hover',
  'tap',
  'focus',
  'blur',
  'clear',
  'dispatchEvent',
  'dragTo',
  'drop',
  'setInputFiles',
  'scrollIntoViewIfNeeded',
  'screenshot',
  'textContent',
  'innerText',
  'innerHTML',
  'inputValue',
  'getAttribute',
  'isChecked',
  'isDisabled',
  'isEditable',
  'isEnabled',
  'boundingBox',
  'evaluate',
  'evaluateHandle',
  'elementHandle',
  'ariaSnapshot',
])

/**
 * Reads that answer at once without waiting. A missing element is a legitimate answer for them, so a refused heal
 * returns that answer instead of failing.
 */
const PRESENCE_QUERIES = new Set(['isVisible', 'isHidden'])

const states = new WeakMap<object, LocatorState>()

/**
 * Wraps a page so that its locators learn the elements they find and heal when those elements go missing.
 * @example
 * const page = createHealingPage(rawPage, { store, testId: 'e2e::checkout.spec.ts::pays' })
 * await page.getByTestId('pay').click() // learns; heals on a later run if the test id is gone
 * if (page.healed) console.log(page.heals)
 */
export function createHealingPage(page: Page, options: HealingPageOptions): HealingPage {
  const probeTimeout = options.probeTimeout ?? 5000
  if (!(probeTimeout > 0)) throw new InputError(`probeTimeout must be > 0, got ${probeTimeout}`)
  const base = resolveHealSettings(options)
  const session = {
    page,
    healer: createHealer({ store: options.store, logger: options.logger, now: options.now }),
    options,
    probeTimeout,
    heals: [],
    learned: new Set(),
    fingerprints: new Map(),
    healedTo: new Map(),
    everHealed: new Set(),
  } as Omit<Session, 'proxy'> as Session
  const bound = new Map<PropertyKey, unknown>()
  session.proxy = new Proxy(page, {
    get(target, prop) {
      if (prop === 'healed') return session.heals.length > 0
      if (prop === 'heals') return session.heals.slice()
      if (typeof prop === 'string' && LOCATOR_FACTORIES.has(prop)) {
        return (...args: unknown[]) => {
          const created = invoke(target, prop, args) as Locator
          return wrapLocator(session, created, `${prop}(${formatArgs(args)})`, {}, base, options.enabled !== false)
        }
      }
      const value: unknown = Reflect.get(target, prop, target)
      if (typeof value !== 'function') return value
      let fn = bound.get(prop)
      if (!fn) {
        fn = (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(target, unwrapArgs(args))
        bound.set(prop, fn)
      }
      return fn
    },
  }) as HealingPage
  return session.proxy
}

/**
 * Gives one locator (and those chained from it) its own heal settings: a stricter threshold, a wider margin, or
 * none at all.
 * @example await withHealing(page.getByRole('button', { name: 'Delete' }), { threshold: 0.8 }).click()
 */
export function withHealing(locator: Locator, options: LocatorHealOptions): Locator {
  const state = states.get(locator)
  if (!state) throw new InputError('withHealing() needs a locator created from a healing page')
  const overrides = { ...state.overrides, ...options }
  const settings = resolveHealSettings(state.session.options, overrides)
  const enabled = state.session.options.enabled !== false && overrides.enabled !== false
  return wrapLocator(state.session, state.target, state.key, overrides, settings, enabled)
}

function wrapLocator(
  session: Session,
  target: Locator,
  key: string,
  overrides: LocatorHealOptions,
  settings: ResolvedHealSettings,
  enabled: boolean,
): Locator {
  const state: LocatorState = { session, target, key, overrides, settings, enabled }
  const bound = new Map<PropertyKey, unknown>()
  const proxy = new Proxy(target, {
    get(t, prop) {
      if (typeof prop === 'string') {
        if (CHAINS.has(prop)) {
          return (...args: unknown[]) => {
            const chained = invoke(t, prop, args) as Locator
            return wrapLocator(session, chained, `${key}.${prop}(${formatArgs(args)})`, overrides, settings, enabled)
          }
        }
        // A description is a label, not a different element: keep the key and its fingerprint.
        if (prop === 'describe') {
          return (description: string) =>
            wrapLocator(session, invoke(t, prop, [description]) as Locator, key, overrides, settings, enabled)
        }
        if (prop === 'page') return () => session.proxy
        if (prop === 'all') {
          return async () => {
            const all = await t.all()
            return all.map((l, i) => wrapLocator(session, l, `${key}.nth(${i})`, overrides, settings, enabled))
          }
        }
        // The call site is captured synchronously, while the test's own frame is still on the stack.
        if (enabled && ELEMENT_ACTIONS.has(prop)) {
          return (...args: unknown[]) => runAction(state, newCall(state, prop, args, new Error()))
        }
        if (enabled && PRESENCE_QUERIES.has(prop)) {
          return (...args: unknown[]) => runPresenceQuery(state, newCall(state, prop, args, new Error()))
        }
        if (enabled && prop === '_expect') {
          return (expression: string, options: ExpectOptions) => runExpect(state, expression, options ?? {})
        }
      }
      const value: unknown = Reflect.get(t, prop, t)
      if (typeof value !== 'function') return value
      let fn = bound.get(prop)
      if (!fn) {
        fn = (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(t, unwrapArgs(args))
        bound.set(prop, fn)
      }
      return fn
    },
  })
  states.set(proxy, state)
  return proxy
}

function invoke(target: object, method: string, args: unknown[]): unknown {
  const fn = (target as Record<string, unknown>)[method]
  if (typeof fn !== 'function') throw new InputError(`${method} is not available in this Playwright version`)
  return (fn as (...a: unknown[]) => unknown).apply(target, unwrapArgs(args))
}

/**
 * Playwright checks that locators it receives are its own: hand it the real ones, also inside option objects and
 * arrays (`{ has: locator }`, `{ mask: [locator] }`). Values without a wrapped locator inside are passed as they are.
 */
function unwrapArgs(args: unknown[]): unknown[] {
  return args.map((a) => unwrap(a, 0))
}

function unwrap(v: unknown, depth: number): unknown {
  if (typeof v !== 'object' || v === null) return v
  const state = states.get(v)
  if (state) return state.target
  if (depth >= 3) return v
  if (Array.isArray(v)) {
    const items = v.map((x: unknown) => unwrap(x, depth + 1))
    return items.some((x, i) => x !== v[i]) ? items : v
  }
  if (!isPlainObject(v)) return v
  let copy: Record<string, unknown> | null = null
  for (const [k, x] of Object.entries(v)) {
    const u = unwrap(x, depth + 1)
    if (u !== x) (copy ??= { ...v })[k] = u
  }
  return copy ?? v
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false
  const proto: unknown = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

function formatValue(v: unknown): string {
  if (typeof v === 'string') return jsString(v)
  if (v instanceof RegExp) return String(v)
  if (typeof v === 'object' && v !== null) {
    const state = states.get(v)
    if (state) return state.key
    if (Array.isArray(v)) return `[${v.map(formatValue).join(', ')}]`
    if (isPlainObject(v)) {
      const entries = Object.entries(v).filter(([, x]) => x !== undefined)
      return entries.length === 0 ? '{}' : `{ ${entries.map(([k, x]) => `${k}: ${formatValue(x)}`).join(', ')} }`
    }
  }
  return String(v)
}

/** The arguments as the test wrote them, so that the key reads like the code and survives Playwright upgrades. */
function formatArgs(args: unknown[]): string {
  return args.map(formatValue).join(', ')
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError'
}

function isStrictViolation(error: unknown): boolean {
  return error instanceof Error && /strict mode violation/i.test(error.message)
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Where each action takes its options object, so that a remaining time budget can be handed to it. */
const OPTIONS_AT: Record<string, number> = {
  fill: 1,
  press: 1,
  pressSequentially: 1,
  type: 1,
  selectOption: 1,
  setChecked: 1,
  getAttribute: 1,
  dragTo: 1,
  setInputFiles: 1,
  drop: 1,
  evaluate: 2,
  dispatchEvent: 2,
  evaluateHandle: -1,
}

/** The timeout the test gave the action: its own option, else the page's default. 0 means no limit. */
function actionTimeout(page: Page, method: string, args: unknown[]): number {
  const at = OPTIONS_AT[method] ?? 0
  const opts = at >= 0 ? args[at] : undefined
  if (isPlainObject(opts) && typeof opts.timeout === 'number') return opts.timeout
  try {
    // Not public API: the page's default after setDefaultTimeout and the runner's actionTimeout.
    const settings = (page as unknown as { _timeoutSettings?: { _timeout?: (o: object) => unknown } })._timeoutSettings
    const t = settings?._timeout?.({})
    if (typeof t === 'number' && t >= 0) return t
  } catch {
    // An older or newer Playwright: fall back to its documented default.
  }
  return 30_000
}

/** The arguments with `timeout` set in the action's options object. */
function withTimeout(method: string, args: unknown[], timeout: number): unknown[] {
  const at = OPTIONS_AT[method] ?? 0
  if (at < 0) return args
  const out = args.slice()
  while (out.length < at) out.push(undefined)
  const opts = out[at]
  out[at] = { ...(isPlainObject(opts) ? opts : {}), timeout }
  return out
}

function call(target: Locator, method: string, args: unknown[]): Promise<unknown> {
  return Promise.resolve(invoke(target, method, args))
}

/** The directory of flakewatch's own modules, whose frames a test author has no use for. */
const OWN_DIR = fileURLToPath(new URL('..', import.meta.url))

/**
 * Points an error at the test's own line: the stack captured when the test called the locator, without
 * flakewatch's frames, so that Playwright's code frame shows the test and not this module.
 */
function atCallSite<E extends Error>(error: E, site: Error): E {
  const frames = (site.stack ?? '')
    .split('\n')
    .slice(1)
    .filter((line) => !line.includes(OWN_DIR) && !line.includes('node:internal'))
  error.stack = `${error.name}: ${error.message}\n${frames.join('\n')}`
  return error
}

/** One locator call as the test made it: the action's name, its time budget and where the test made it. */
interface CallSite {
  /** `locator.click`, as Playwright names it. */
  api: string
  method: string
  args: unknown[]
  /** The action's own timeout, 0 for none. */
  timeout: number
  started: number
  site: Error
}

function newCall(state: LocatorState, method: string, args: unknown[], site: Error): CallSite {
  const timeout = actionTimeout(state.session.page, method, args)
  return { api: `locator.${method}`, method, args, timeout, started: Date.now(), site }
}

/** Time left of the action's budget; `Infinity` without one. */
function remaining(c: CallSite): number {
  return c.timeout > 0 ? c.timeout - (Date.now() - c.started) : Infinity
}

/** The probe waits no longer than the action itself would (`timeout: 0` means no limit there). */
function probeFor(c: CallSite, probe: number): number {
  return c.timeout > 0 ? Math.max(1, Math.min(c.timeout, probe)) : probe
}

async function learnedOf(state: LocatorState): Promise<ElementFingerprint | null> {
  const { session, key } = state
  if (!session.fingerprints.has(key)) {
    session.fingerprints.set(key, await session.healer.learned(session.options.testId, key))
  }
  return session.fingerprints.get(key) ?? null
}

/**
 * Learns the element a locator found, once per page and locator: when nothing was learned yet, or when it is a
 * confident match of the learned element (a doubtful one must not overwrite what a later heal needs).
 */
async function learnOnce(state: LocatorState, capture: Capture): Promise<void> {
  const { session, key } = state
  if (session.learned.has(key)) return
  session.learned.add(key)
  const learned = await learnedOf(state)
  if (learned && checkMatch(learned, capture.fingerprint, state.settings).verdict !== 'confident') return
  await session.healer.learn(session.options.testId, key, capture.fingerprint)
}

/**
 * Verify on success: the first time a locator resolves in this page, its element is compared with the learned one.
 * Null when it is the learned element (or nothing was learned, or it was checked already); else the check, for
 * the caller to look for the right element.
 */
async function verifyFound(state: LocatorState, capture: Capture): Promise<MatchCheck | null> {
  if (state.session.learned.has(state.key) && !state.session.everHealed.has(state.key)) return null
  const learned = await learnedOf(state)
  if (!learned) return null
  const check = checkMatch(learned, capture.fingerprint, state.settings)
  if (check.verdict !== 'confident') return check
  // A look-alike that took the learned element's class or place while the learned id lives on elsewhere in the
  // page: not confident, so that the page is ranked and the element that kept its identity can win.
  const id = learned.id
  if (id === '' || capture.fingerprint.id === id) return null
  const elsewhere = await state.session.page
    .locator(idSelector(id))
    .count()
    .catch(() => 0)
  return elsewhere === 1 ? { ...check, verdict: 'doubtful' } : null
}

function mismatchError(state: LocatorState, c: CallSite, capture: Capture, check: MatchCheck, outcome: HealOutcome) {
  const learned = outcome.status === 'refused' ? outcome.learned : null
  const candidates = outcome.status === 'refused' ? outcome.rank.candidates : []
  const message =
    `${c.api}: ${state.key} found an element that is not the one this test learned ` +
    `(score ${check.score.toFixed(2)}${check.conflict ? `; it ${check.conflict}` : ''}), ` +
    `and no element on the page qualifies instead.\n` +
    `  Learned: ${learned ? describeFingerprint(learned) : '?'}\n` +
    `  Found:   ${describeFingerprint(capture.fingerprint)}\n` +
    (outcome.status === 'refused' ? `${outcome.summary}\n` : '') +
    `If the page changed on purpose, update the locator; its fingerprint is relearned on the next confident match.`
  const error = new HealMismatchError(state.key, candidates, capture.fingerprint, check, message, {
    action: c.api,
    learned: learned ?? capture.fingerprint,
  })
  return atCallSite(error, c.site)
}

async function runAction(state: LocatorState, c: CallSite): Promise<unknown> {
  const { target, session } = state
  const healedCall = (selector: string) => call(session.page.locator(selector), c.method, c.args)
  const reused = await reuseHeal(state)
  if (reused) return call(reused, c.method, c.args)
  let capture: Capture
  try {
    capture = await target.evaluate(capturePageFunction, state.settings.describe, {
      timeout: probeFor(c, session.probeTimeout),
    })
  } catch (probeError) {
    const late = await lateCapture(state, probeError)
    if (late) return actOnFound(state, c, late)
    if (isStrictViolation(probeError)) {
      const outcome = await tryChoose(state)
      if (outcome?.status === 'healed') return healedCall(outcome.selector)
      if (outcome?.status === 'refused') throw refusal(state, c, outcome, probeError)
      return call(target, c.method, c.args)
    }
    // Anything else but "not found in time" (a closed page) is the action's to report.
    if (!isTimeout(probeError)) return call(target, c.method, c.args)
    const outcome = await tryHeal(state, null, 'missing')
    if (outcome?.status === 'healed') return healedCall(outcome.selector)
    // Not healed: the element may still come within the action's own budget, and the action fails only once.
    let left = remaining(c)
    if (outcome?.status === 'refused' && left === Infinity) left = session.probeTimeout
    if (outcome?.status === 'refused' && left < 1) throw refusal(state, c, outcome, probeError)
    // Without a refusal to report, a probe that used up the budget on a loaded machine must not fail the action.
    if (outcome?.status !== 'refused' && left < 1000) left = 1000
    let result: unknown
    try {
      result = await call(target, c.method, left === Infinity ? c.args : withTimeout(c.method, c.args, left))
    } catch (actionError) {
      throw refusal(state, c, outcome, actionError)
    }
    await learnAfter(state)
    return result
  }
  return actOnFound(state, c, capture)
}

/**
 * On a loaded machine the element may have come just after the probe gave up: then it is the found element, checked
 * against the learned one like any other (never healed onto, never used unchecked). Null when the probe failed for
 * another reason or nothing came.
 */
async function lateCapture(state: LocatorState, probeError: unknown): Promise<Capture | null> {
  if (!isTimeout(probeError)) return null
  return (await state.target.count().catch(() => 0)) === 1 ? captureNow(state) : null
}

/** The locator found one element: check it against the learned one, heal a mis-resolution, else act as written. */
async function actOnFound(state: LocatorState, c: CallSite, capture: Capture): Promise<unknown> {
  const { target, session } = state
  const healedCall = (selector: string) => call(session.page.locator(selector), c.method, c.args)
  const doubt = await verifyFound(state, capture)
  if (doubt) {
    const outcome = await tryHeal(state, capture.selector, 'mis-resolved')
    if (outcome?.status === 'healed') {
      state.session.learned.add(state.key)
      return healedCall(outcome.selector)
    }
    if (doubt.verdict === 'mismatch' && outcome && outcome.status !== 'unlearned') {
      throw mismatchError(state, c, capture, doubt, outcome)
    }
  }
  let result: unknown
  try {
    // Found: the action runs as written, with its own timeout (the quick probe is not taken off it).
    result = await call(target, c.method, c.args)
  } catch (actionError) {
    if (!isTimeout(actionError)) throw actionError
    const outcome = await tryHeal(state, capture.selector, 'missing')
    if (outcome?.status === 'healed') return healedCall(outcome.selector)
    throw refusal(state, c, outcome, actionError)
  }
  if (doubt) state.session.learned.add(state.key)
  else await learnOnce(state, capture)
  return result
}

async function runPresenceQuery(state: LocatorState, c: CallSite): Promise<unknown> {
  const { target, session } = state
  const reused = await reuseHeal(state)
  if (reused) return call(reused, c.method, c.args)
  const count = await target.count()
  if (count === 0) {
    const outcome = await tryHeal(state, null, 'missing')
    if (outcome?.status === 'healed') return call(session.page.locator(outcome.selector), c.method, c.args)
    return call(target, c.method, c.args)
  }
  if (count > 1) {
    const outcome = await tryChoose(state)
    if (outcome?.status === 'healed') return call(session.page.locator(outcome.selector), c.method, c.args)
    if (outcome?.status === 'refused') throw refusal(state, c, outcome, null)
  }
  const result = await call(target, c.method, c.args)
  const present = c.method === 'isVisible' ? result === true : result === false
  if (count === 1 && present) await learnAfter(state)
  return result
}

/** What `expect(locator)` reads back from `locator._expect`. */
interface ExpectResult {
  matches: boolean
  log?: string[]
  timedOut?: boolean
  received?: unknown
  errorMessage?: string
}

interface ExpectOptions {
  isNot?: boolean
  timeout?: number
  [k: string]: unknown
}

/**
 * Assertions that pass when the element is missing or that look at every match: a heal would change what they
 * mean, so they run as written.
 */
const EXPECT_AS_WRITTEN = new Set(['to.be.hidden', 'to.be.detached', 'to.have.count'])

/**
 * Web-first assertions (`expect(locator).toBeVisible()`, `toHaveText`, …): Playwright's `expect` runs them
 * through `locator._expect`, which this wraps. The assertion first runs with the probe's share of its timeout;
 * when it fails because the element is missing, ambiguous or not the learned one, the healed element gets the
 * assertion instead. A refusal adds its candidates to the assertion's call log.
 */
async function runExpect(state: LocatorState, expression: string, options: ExpectOptions): Promise<ExpectResult> {
  const { target, session } = state
  const real = (l: Locator, o: ExpectOptions) =>
    (l as unknown as { _expect(e: string, o: ExpectOptions): Promise<ExpectResult> })._expect(expression, o)
  if (options.isNot || EXPECT_AS_WRITTEN.has(expression) || expression.endsWith('.array')) return real(target, options)
  const reused = await reuseHeal(state)
  if (reused) return real(reused, options)
  const timeout = typeof options.timeout === 'number' ? options.timeout : 5000
  const c: CallSite = { api: 'expect', method: '_expect', args: [], timeout, started: Date.now(), site: new Error() }
  const first = await real(target, { ...options, timeout: probeFor(c, session.probeTimeout) })
  const onHealed = (selector: string) =>
    real(session.page.locator(selector), { ...options, timeout: Math.max(remaining(c), Math.min(timeout, 1000)) })
  let outcome: HealOutcome | null = null
  let mismatch: { capture: Capture; check: MatchCheck } | null = null
  const count = await target.count()
  if (count === 1) {
    const capture = await captureNow(state)
    const doubt = capture ? await verifyFound(state, capture) : null
    if (capture && doubt) {
      outcome = await tryHeal(state, capture.selector, 'mis-resolved')
      if (outcome?.status === 'healed') {
        session.learned.add(state.key)
        return onHealed(outcome.selector)
      }
      if (doubt.verdict === 'mismatch' && outcome && outcome.status === 'refused') mismatch = { capture, check: doubt }
      session.learned.add(state.key)
    } else if (capture && first.matches) {
      await learnOnce(state, capture)
    }
    if (first.matches && !mismatch) return first
  } else if (first.matches) {
    return first
  } else {
    outcome = count === 0 ? await tryHeal(state, null, 'missing') : await tryChoose(state)
    if (outcome?.status === 'healed') return onHealed(outcome.selector)
  }
  if (mismatch && outcome) {
    const error = mismatchError(state, { ...c, api: `expect(${state.key})` }, mismatch.capture, mismatch.check, outcome)
    return { ...first, matches: false, errorMessage: error.message }
  }
  let left = remaining(c)
  if (outcome?.status === 'refused') left = Math.min(left, session.probeTimeout)
  const result = left >= 1 && !first.matches ? await real(target, { ...options, timeout: left }) : first
  if (!result.matches && outcome?.status === 'refused') {
    return { ...result, log: [...(result.log ?? []), '', ...outcome.summary.split('\n')] }
  }
  if (result.matches && count === 0) await learnAfter(state)
  return result
}

async function captureNow(state: LocatorState): Promise<Capture | null> {
  try {
    // The element was just found, so this is quick; a loaded CI machine still needs seconds at times, or the
    // element would silently never be learned.
    return await state.target.evaluate(capturePageFunction, state.settings.describe, { timeout: 5000 })
  } catch {
    return null
  }
}

/**
 * Learns from the element after the call that found it: for an element that came after the probe gave up, and
 * for presence reads. Skipped if the element has gone meanwhile (the action navigated away).
 */
async function learnAfter(state: LocatorState): Promise<void> {
  if (state.session.learned.has(state.key)) return
  const capture = await captureNow(state)
  if (capture) await learnOnce(state, capture)
}

/**
 * The element an earlier heal of this locator led to, when it is still there, alone, and still the learned element
 * (no conflict, at or above the threshold); else null, and the heal is forgotten: the call then goes the whole way
 * again (probe, check, heal or refusal), so that a stale heal is never used silently. One count and one capture:
 * no probe wait.
 */
async function reuseHeal(state: LocatorState): Promise<Locator | null> {
  const { session, key } = state
  const healed = session.healedTo.get(key)
  if (!healed) return null
  const forget = () => {
    session.healedTo.delete(key)
    return null
  }
  const learned = await learnedOf(state)
  if (!learned) return forget()
  for (const locator of [suggestionLocator(session.page, healed.suggestion), session.page.locator(healed.selector)]) {
    if ((await locator.count().catch(() => 0)) !== 1) continue
    const capture = await locator
      .evaluate(capturePageFunction, state.settings.describe, { timeout: 1000 })
      .catch(() => null)
    if (capture && checkMatch(learned, capture.fingerprint, state.settings).verdict !== 'mismatch') return locator
  }
  return forget()
}

function recordHeal(state: LocatorState, outcome: HealOutcome | null): void {
  if (outcome?.status !== 'healed') return
  const { session, key } = state
  const { record } = outcome
  session.healedTo.set(key, { suggestion: outcome.suggestion, selector: outcome.selector })
  session.everHealed.add(key)
  // The healed element is what this locator means now: never learn the element it finds in its place.
  session.learned.add(key)
  if (!session.heals.some((h) => h.oldLocator === key && h.newLocator === record.newLocator)) {
    session.heals.push(record)
    session.options.onHeal?.(record)
  }
}

function healRequest(state: LocatorState, currentSelector: string | null, cause: HealCause) {
  const { session, key } = state
  return {
    testId: session.options.testId,
    locator: key,
    runId: session.options.runId ?? null,
    settings: state.settings,
    currentSelector,
    cause,
    verify: (s: LocatorSuggestion, selector: string) => verifySuggestion(session.page, s, selector),
    alreadyLogged: (r: HealRecord) =>
      session.heals.some((h) => h.oldLocator === r.oldLocator && h.newLocator === r.newLocator),
  }
}

/** Healing must never hide the real failure: if the heal step itself breaks, report it and carry on without it. */
async function tryHeal(
  state: LocatorState,
  currentSelector: string | null,
  cause: HealCause,
): Promise<HealOutcome | null> {
  const { session, key } = state
  try {
    const outcome = await session.healer.heal(session.page, healRequest(state, currentSelector, cause))
    recordHeal(state, outcome)
    return outcome
  } catch (error) {
    ;(session.options.logger ?? console).warn(`flakewatch: healing ${key} failed: ${messageOf(error)}`)
    return null
  }
}

/** A strict-mode violation: the learned element is chosen among the matches by the same heal rule. */
async function tryChoose(state: LocatorState): Promise<HealOutcome | null> {
  const { session, key } = state
  try {
    if (!(await learnedOf(state))) return { status: 'unlearned' }
    const matches = await state.target.evaluateAll(captureAllPageFunction, state.settings.describe)
    const outcome = await session.healer.choose(session.page, healRequest(state, null, 'strict-mode'), matches)
    recordHeal(state, outcome)
    return outcome
  } catch (error) {
    ;(session.options.logger ?? console).warn(`flakewatch: healing ${key} failed: ${messageOf(error)}`)
    return null
  }
}

/**
 * The error of a refused heal: named after the test's action, at the test's line, with the candidates and the
 * reason. Without a refusal (nothing learned, or the heal step broke) the original error stands.
 */
function refusal(state: LocatorState, c: CallSite, outcome: HealOutcome | null, original: unknown): unknown {
  if (!outcome || outcome.status !== 'refused') return original
  const what =
    original === null
      ? ''
      : isStrictViolation(original)
        ? `${state.key} matches several elements. `
        : c.timeout > 0
          ? `Timeout ${c.timeout}ms exceeded waiting for ${state.key}. `
          : `${state.key} found nothing. `
  const detail = original === null ? '' : `\n\nPlaywright said: ${messageOf(original)}`
  const error = new HealRefusedError(
    state.key,
    outcome.reason,
    outcome.rank.candidates,
    `${c.api}: ${what}${outcome.summary}${detail}`,
    { cause: original ?? undefined, action: c.api, learned: outcome.learned },
  )
  return atCallSite(error, c.site)
}

/** A suggestion counts only if Playwright's own engine finds exactly the healed element with it. */
async function verifySuggestion(page: Page, s: LocatorSuggestion, selector: string): Promise<boolean> {
  const locator = suggestionLocator(page, s)
  try {
    if ((await locator.count()) !== 1) return false
    return await locator.evaluate((el, sel) => el === document.querySelector(sel), selector, { timeout: 5000 })
  } catch {
    return false
  }
}

/** The Playwright locator a suggestion stands for: what `locatorCode` writes, built on the raw page. */
function suggestionLocator(page: Page, s: LocatorSuggestion): Locator {
  switch (s.kind) {
    case 'testid':
      return page.getByTestId(s.value)
    case 'id':
      return page.locator(idSelector(s.value))
    case 'role':
      return page.getByRole(s.role as Parameters<Page['getByRole']>[0], { name: s.name, exact: true })
    case 'label':
      return page.getByLabel(s.value, { exact: true })
    case 'text':
      return page.getByText(s.value, { exact: true })
    case 'css':
      return page.locator(s.value)
    case 'row':
      return page
        .getByRole(s.row)
        .filter({ has: page.getByText(s.key, { exact: true }) })
        .getByRole(s.role as Parameters<Page['getByRole']>[0], { name: s.name, exact: true })
  }
}
