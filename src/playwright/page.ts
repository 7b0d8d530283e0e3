/**
 * The healing wrapper around a Playwright `Page`. Types come from `@playwright/test` and are erased: at runtime this
 * module only uses the page it is given, so it works with `playwright-core` as well.
 */
import type { Locator, Page } from '@playwright/test'
import { InputError } from '../errors.js'
import type { Capture, LocatorSuggestion } from '../heal/fingerprint.js'
import { capturePageFunction } from '../heal/fingerprint.js'
import { HealRefusedError, createHealer, idSelector, jsString, resolveHealSettings } from '../heal/healer.js'
import type { HealLogger, HealOutcome, HealSettings, HealStore, Healer, ResolvedHealSettings } from '../heal/healer.js'
import type { HealRecord } from '../store/store.js'

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
   * `timeout` passed to the action wins. When the heal is refused the action still runs with its own timeout, so
   * a slow page is never failed early.
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
  learned: Set<string>
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
        if (enabled && ELEMENT_ACTIONS.has(prop)) return (...args: unknown[]) => runAction(state, prop, args)
        if (enabled && PRESENCE_QUERIES.has(prop)) return (...args: unknown[]) => runPresenceQuery(state, prop, args)
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** The probe waits no longer than the action itself would (`timeout: 0` means no limit there). */
function probeTimeoutFor(args: unknown[], probe: number): number {
  for (let i = args.length - 1; i >= 0; i--) {
    const a = args[i]
    if (isPlainObject(a) && typeof a.timeout === 'number' && a.timeout > 0) return Math.min(a.timeout, probe)
  }
  return probe
}

function call(target: Locator, method: string, args: unknown[]): Promise<unknown> {
  return Promise.resolve(invoke(target, method, args))
}

async function learnOnce(state: LocatorState, capture: Capture): Promise<void> {
  const { session, key } = state
  if (session.learned.has(key)) return
  session.learned.add(key)
  await session.healer.learn(session.options.testId, key, capture.fingerprint)
}

async function runAction(state: LocatorState, method: string, args: unknown[]): Promise<unknown> {
  const { target, session } = state
  let capture: Capture
  try {
    capture = await target.evaluate(capturePageFunction, state.settings.describe, {
      timeout: probeTimeoutFor(args, session.probeTimeout),
    })
  } catch (probeError) {
    // Anything but "not found in time" (a strict-mode violation, a closed page) is the action's to report.
    if (!isTimeout(probeError)) return call(target, method, args)
    const outcome = await tryHeal(state, null)
    if (outcome?.status === 'healed') return call(session.page.locator(outcome.selector), method, args)
    // Not healed: the element may still come within the action's own timeout.
    let result: unknown
    try {
      result = await call(target, method, args)
    } catch (actionError) {
      throw refusal(state, outcome, actionError)
    }
    await learnAfter(state)
    return result
  }
  let result: unknown
  try {
    result = await call(target, method, args)
  } catch (actionError) {
    if (!isTimeout(actionError)) throw actionError
    const outcome = await tryHeal(state, capture.selector)
    if (outcome?.status === 'healed') return call(session.page.locator(outcome.selector), method, args)
    throw refusal(state, outcome, actionError)
  }
  await learnOnce(state, capture)
  return result
}

async function runPresenceQuery(state: LocatorState, method: string, args: unknown[]): Promise<unknown> {
  const { target, session } = state
  const count = await target.count()
  if (count === 0) {
    const outcome = await tryHeal(state, null)
    if (outcome?.status === 'healed') return call(session.page.locator(outcome.selector), method, args)
    return call(target, method, args)
  }
  const result = await call(target, method, args)
  const present = method === 'isVisible' ? result === true : result === false
  if (count === 1 && present) await learnAfter(state)
  return result
}

/**
 * Learns from the element after the call that found it: for an element that came after the probe gave up, and
 * for presence reads. Skipped if the element has gone meanwhile (the action navigated away).
 */
async function learnAfter(state: LocatorState): Promise<void> {
  if (state.session.learned.has(state.key)) return
  try {
    // The element was just found, so this is quick; the bound only matters if it vanished, and a loaded CI machine
    // needs more than a few milliseconds to answer, or the element would silently never be learned.
    await learnOnce(state, await state.target.evaluate(capturePageFunction, state.settings.describe, { timeout: 2000 }))
  } catch {
    // Gone or ambiguous: nothing to learn this time.
  }
}

/** Healing must never hide the real failure: if the heal step itself breaks, report it and carry on without it. */
async function tryHeal(state: LocatorState, currentSelector: string | null): Promise<HealOutcome | null> {
  const { session, key } = state
  const { options } = session
  try {
    const outcome = await session.healer.heal(session.page, {
      testId: options.testId,
      locator: key,
      runId: options.runId ?? null,
      settings: state.settings,
      currentSelector,
      verify: (s, selector) => verifySuggestion(session.page, s, selector),
      alreadyLogged: (r) => session.heals.some((h) => h.oldLocator === r.oldLocator && h.newLocator === r.newLocator),
    })
    if (outcome.status === 'healed') {
      const { record } = outcome
      if (!session.heals.some((h) => h.oldLocator === key && h.newLocator === record.newLocator)) {
        session.heals.push(record)
        options.onHeal?.(record)
      }
    }
    return outcome
  } catch (error) {
    ;(options.logger ?? console).warn(`flakewatch: healing ${key} failed: ${messageOf(error)}`)
    return null
  }
}

function refusal(state: LocatorState, outcome: HealOutcome | null, original: unknown): unknown {
  if (!outcome || outcome.status !== 'refused') return original
  return new HealRefusedError(
    state.key,
    outcome.reason,
    outcome.rank.candidates,
    `${messageOf(original)}\n\n${outcome.summary}`,
    { cause: original },
  )
}

/** A suggestion counts only if Playwright's own engine finds exactly the healed element with it. */
async function verifySuggestion(page: Page, s: LocatorSuggestion, selector: string): Promise<boolean> {
  const locator =
    s.kind === 'testid'
      ? page.getByTestId(s.value)
      : s.kind === 'id'
        ? page.locator(idSelector(s.value))
        : s.kind === 'role'
          ? page.getByRole(s.role as Parameters<Page['getByRole']>[0], { name: s.name, exact: true })
          : page.locator(s.value)
  try {
    if ((await locator.count()) !== 1) return false
    return await locator.evaluate((el, sel) => el === document.querySelector(sel), selector, { timeout: 1000 })
  } catch {
    return false
  }
}
