/**
 * What an element does, told apart from what it looks like. A heal must never turn a click on "Delete account"
 * into one on "Deactivate account", or a newsletter's Submit into the checkout's: markup similarity cannot see
 * that, so these rules veto a candidate whatever its score. Pure; runs in Node on the few best candidates.
 */
import { textSimilarity, translatedPair } from './similarity.js'
import type { ElementFingerprint } from './similarity.js'

/**
 * Words and phrases that name the same action, each group one action. Two different groups are different
 * actions (the opposites among them: add/remove, sign in/sign out, enable/disable, …). Icon names are listed
 * with their action: an icon-only button is known by its icon.
 */
const ACTION_GROUPS: readonly (readonly string[])[] = [
  ['sign in', 'log in', 'login', 'signin', 'log on'],
  ['sign up', 'register', 'create account', 'join'],
  ['sign out', 'log out', 'logout', 'signout'],
  ['delete', 'remove', 'trash', 'bin', 'discard', 'erase', 'destroy'],
  ['deactivate', 'disable', 'suspend', 'turn off'],
  ['activate', 'enable', 'turn on', 'reactivate'],
  ['add', 'create', 'new', 'plus', 'insert'],
  ['edit', 'modify', 'change', 'pencil', 'pen', 'rename'],
  ['save', 'apply', 'submit', 'send', 'confirm', 'ok', 'done', 'update', 'checkmark'],
  ['cancel', 'close', 'dismiss', 'x', 'times', 'xmark'],
  ['search', 'find', 'magnifier', 'magnifying glass'],
  ['buy', 'purchase', 'pay', 'checkout', 'order', 'place'],
  ['next', 'continue', 'proceed', 'forward', 'arrow right', 'chevron right'],
  ['previous', 'prev', 'back', 'arrow left', 'chevron left'],
  ['download', 'export'],
  ['upload', 'import', 'attach', 'paperclip'],
  ['open', 'view', 'show', 'details', 'expand', 'eye'],
  ['hide', 'collapse', 'eye slash'],
  ['settings', 'preferences', 'options', 'gear', 'cog'],
  ['share'],
  ['copy', 'duplicate', 'clone'],
  ['refresh', 'reload', 'retry', 'sync'],
  ['reset', 'clear'],
  ['archive'],
  ['unarchive', 'restore'],
  ['subscribe', 'follow'],
  ['unsubscribe', 'unfollow'],
  ['accept', 'approve', 'allow', 'agree'],
  ['reject', 'decline', 'deny', 'refuse'],
  ['lock'],
  ['unlock'],
  ['print', 'printer'],
  ['filter'],
  ['sort'],
  ['help', 'support', 'question'],
  ['menu', 'more', 'ellipsis', 'bars', 'hamburger'],
  ['like', 'heart', 'favorite', 'favourite', 'star'],
  ['pin'],
  ['mute'],
  ['play', 'start', 'run'],
  ['pause', 'stop'],
]

/** Phrase (one or two words) → its group's index. */
const ACTIONS: ReadonlyMap<string, number> = new Map(ACTION_GROUPS.flatMap((g, i) => g.map((w) => [w, i] as const)))

const FILLERS = new Set([
  'a',
  'an',
  'the',
  'to',
  'your',
  'my',
  'our',
  'this',
  'of',
  'for',
  'in',
  'on',
  'and',
  'now',
  'all',
  'with',
  'me',
  'it',
])

/** Roles whose name says what they do when used. */
const ACTIONABLE = new Set([
  'button',
  'link',
  'menuitem',
  'tab',
  'option',
  'switch',
  'menuitemcheckbox',
  'menuitemradio',
])

/** Roles whose name says which value they hold. */
const FIELDS = new Set(['textbox', 'searchbox', 'combobox', 'listbox', 'spinbutton', 'slider', 'checkbox', 'radio'])

/**
 * Lower-case words of a name; a hyphen inside a word is dropped (`E-mail` is `email`) and plurals fold (`items`).
 * @example words('Add to cart') // ['add', 'to', 'cart']
 */
export function words(name: string): string[] {
  return name
    .toLowerCase()
    .replace(/(\p{L})-(\p{L})/gu, '$1$2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w))
}

/** The action a name starts with, as a group index, and the words after it that are not fillers. */
export interface Intent {
  /** Group index, or the first word itself when it is no known action, or null for an empty name. */
  action: number | string | null
  known: boolean
  object: string[]
}

/**
 * Splits a name into its action and its object.
 * @example intentOf('Delete account') // { action: 3, known: true, object: ['account'] }
 */
export function intentOf(name: string): Intent {
  const ws = words(name)
  if (ws.length === 0) return { action: null, known: false, object: [] }
  const two = ws.length > 1 ? ACTIONS.get(ws[0] + ' ' + ws[1]) : undefined
  if (two !== undefined) return { action: two, known: true, object: objectWords(ws.slice(2)) }
  const one = ACTIONS.get(ws[0]!)
  if (one !== undefined) return { action: one, known: true, object: objectWords(ws.slice(1)) }
  return { action: ws[0]!, known: false, object: objectWords(ws.slice(1)) }
}

function objectWords(ws: string[]): string[] {
  return ws.filter((w) => !FILLERS.has(w)).map((w) => String(ACTIONS.get(w) ?? w))
}

function nameOf(fp: ElementFingerprint): string {
  return fp.name || fp.text
}

function share(a: readonly string[], b: readonly string[]): boolean {
  return a.some((w) => b.includes(w))
}

/**
 * The parts of a form's identity (`id|name|action|label`) tell whether two forms are one: a part both have and
 * agree on, or labels that read alike. Forms without any identifying part cannot be told apart: the same.
 * @example sameForm('checkout|||Checkout', '|||Newsletter') // false
 */
export function sameForm(a: string, b: string): boolean {
  const pa = a.split('|')
  const pb = b.split('|')
  let comparable = false
  for (let i = 0; i < 3; i++) {
    if (!pa[i] || !pb[i]) continue
    comparable = true
    if (pa[i] === pb[i]) return true
  }
  const la = (pa[3] ?? '').toLowerCase()
  const lb = (pb[3] ?? '').toLowerCase()
  if (la && lb) {
    comparable = true
    if (textSimilarity(la, lb) >= 0.6) return true
  }
  return !comparable
}

/** The key of a row or card (`row|alice`), without its kind. */
function itemKey(item: string): string {
  const bar = item.indexOf('|')
  return (bar >= 0 ? item.slice(bar + 1) : item).trim().toLowerCase()
}

/** Regions that are sections of a page, not its landmarks: a labelled one tells its controls from another's. */
const SECTIONS = new Set(['section', 'region', 'dialog', 'alertdialog', 'tabpanel', 'fieldset', 'group'])

/** Attributes that carry a label, which a translation or a copy edit rewrites: not structure. */
const LABEL_ATTRIBUTES = new Set(['aria-label', 'title', 'alt', 'placeholder', 'value', 'aria-description', 'style'])

/**
 * Whether two elements are the same by structure alone: the same id or test id, the same DOM path, and the same
 * attributes other than labels. A relabelled element (a translation, a new verb no list knows) keeps all three.
 * @example sameStructure(saveEn, saveDe) // true: #save, same path, same type
 */
export function sameStructure(a: ElementFingerprint, b: ElementFingerprint): boolean {
  const anchored = (a.id !== '' && a.id === b.id) || (a.testId !== null && a.testId === b.testId)
  if (!anchored || a.tag !== b.tag || a.path.join('>') !== b.path.join('>')) return false
  const names = new Set([...Object.keys(a.attrs), ...Object.keys(b.attrs)])
  for (const name of names) if (!LABEL_ATTRIBUTES.has(name) && a.attrs[name] !== b.attrs[name]) return false
  return true
}

/**
 * Why `candidate` does something other than the learned element, or null when nothing says so:
 * - a control whose name starts with a different action (Delete vs Deactivate, Sign in vs Sign out), or the same
 *   action on a different object (Export CSV vs Export PDF, Add to cart vs Add to wishlist);
 * - a field with a different label (First name vs Last name);
 * - a control or field of another form;
 * - a control in another row or card (another key cell), or in a row nothing identifies uniquely.
 * Across languages (`lang` differs) names are not compared: a translated control is judged by its role, its
 * destination (`href`) and its place. Nor does an unknown word against a known verb count as another action when
 * the structure is the same (`sameStructure`): a new label no list knows is not a new action. Two known, different
 * verbs (Delete where Save was) always conflict.
 * @example actionConflict(deleteAccount, deactivateAccount) // "does something else: 'Deactivate account' …"
 */
export function actionConflict(learned: ElementFingerprint, candidate: ElementFingerprint): string | null {
  const roleA = learned.role ?? ''
  const roleB = candidate.role ?? ''
  const acts = ACTIONABLE.has(roleA) || learned.attrs.type === 'submit'
  const holds = FIELDS.has(roleA)
  const nameA = nameOf(learned)
  const nameB = nameOf(candidate)
  const translated = translatedPair(learned, candidate)
  if (translated && (acts || holds)) {
    if (roleA !== roleB) return `is another kind of control: ${roleB || candidate.tag} where the test used ${roleA}`
    const hrefA = learned.attrs.href
    const hrefB = candidate.attrs.href
    if (hrefA !== undefined && hrefB !== undefined && hrefA !== hrefB) {
      return `leads somewhere else: ${hrefB} where the test used ${hrefA}`
    }
  }
  const comparable = !translated && nameA && nameB && words(nameA).length <= 8 && words(nameB).length <= 8
  if ((acts || holds) && comparable) {
    const a = intentOf(nameA)
    const b = intentOf(nameB)
    const relabelled = a.known !== b.known && sameStructure(learned, candidate)
    if (acts && (ACTIONABLE.has(roleB) || candidate.attrs.type === 'submit')) {
      if (a.action !== b.action && (a.known || b.known) && !relabelled) {
        return `does something else: '${nameB}' where the test used '${nameA}'`
      }
      if (a.action === b.action && a.object.length > 0 && b.object.length > 0 && !share(a.object, b.object)) {
        return `acts on something else: '${nameB}' where the test used '${nameA}'`
      }
      // Names that are no verbs (tabs, nav links: Billing, Shipping) share a word or name different places.
      if (!a.known && !b.known && !share(words(nameA), words(nameB))) {
        return `leads somewhere else: '${nameB}' where the test used '${nameA}'`
      }
    }
    if (holds && FIELDS.has(roleB) && !share(words(nameA), words(nameB))) {
      return `is another field: '${nameB}' where the test used '${nameA}'`
    }
  }
  const ctxA = learned.context
  const ctxB = candidate.context
  if (ctxA && ctxB && (acts || holds)) {
    if (ctxA.form && ctxB.form && !sameForm(ctxA.form, ctxB.form)) {
      return `belongs to another form (${formLabel(ctxB.form)} where the test used ${formLabel(ctxA.form)})`
    }
    // A labelled section of its own (not a page landmark): another section's Export is another export. Labels
    // are not compared across languages, and an element that kept its own id or test id moved with its section.
    const [kindA = '', labelA = ''] = ctxA.region.split('|')
    const [kindB = '', labelB = ''] = ctxB.region.split('|')
    const kept =
      (learned.id !== '' && learned.id === candidate.id) || (!!learned.testId && learned.testId === candidate.testId)
    if (
      SECTIONS.has(kindA) &&
      kindA === kindB &&
      labelA &&
      labelB &&
      !translated &&
      !kept &&
      textSimilarity(labelA.toLowerCase(), labelB.toLowerCase()) < 0.6
    ) {
      return `belongs to another section ('${labelB}' where the test used '${labelA}')`
    }
    const ka = itemKey(ctxA.item)
    const kb = itemKey(ctxB.item)
    if (ka && kb && !ka.includes(kb) && !kb.includes(ka)) {
      return `belongs to another row or card ('${kb}' where the test used '${ka}')`
    }
    // `row|`: the candidate's row has no value of its own (two lines of one product): it cannot be told apart.
    if (ka && ctxB.item !== '' && !kb) {
      return `is in a row or card that nothing identifies uniquely (the test used '${ka}')`
    }
  }
  return null
}

function formLabel(form: string): string {
  const [id, name, , label] = form.split('|')
  return label ? `'${label}'` : id ? `form#${id}` : name ? `form[name=${name}]` : 'a form'
}

/**
 * Whether two names say the same action on the same object, in other words: `Delete` and a trash icon, `Log in`
 * and `Sign in`. Text similarity cannot see that; the heal ranking lifts the name signal of such candidates.
 * @example sameIntent('Delete', 'trash') // true
 */
export function sameIntent(a: string, b: string): boolean {
  if (!a || !b) return false
  const ia = intentOf(a)
  const ib = intentOf(b)
  if (!ia.known || ia.action !== ib.action) return false
  return ia.object.length === 0 || ib.object.length === 0 || share(ia.object, ib.object)
}
