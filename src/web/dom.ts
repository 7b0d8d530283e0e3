/**
 * The only way the dashboard builds DOM: elements from `createElement`, text from text nodes. Data never goes
 * through an HTML parser, so a test named `<script>` is just text.
 */

export type Child = Node | string | number | null | undefined | false

export interface Props {
  class?: string
  title?: string
  /** Internal paths (`/tests/...`) or http(s) URLs only; anything else is dropped. */
  href?: string
  target?: string
  rel?: string
  type?: string
  name?: string
  value?: string
  placeholder?: string
  id?: string
  role?: string
  for?: string
  min?: string | number
  max?: string | number
  step?: string | number
  disabled?: boolean
  checked?: boolean
  required?: boolean
  autocomplete?: string
  rows?: number
  tabindex?: number
  colspan?: number
  'aria-label'?: string
  'aria-hidden'?: string
  'aria-live'?: string
  'aria-sort'?: string
  'aria-current'?: string
  'aria-controls'?: string
  'aria-expanded'?: string
  dataset?: Record<string, string>
  on?: { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void }
}

/**
 * A URL safe to link to: `http:` or `https:` only, so a stored `javascript:` URL can never run.
 * @example safeUrl('javascript:alert(1)') // null
 */
export function safeUrl(url: string | null | undefined): string | null {
  if (!url) return null
  try {
    const u = new URL(url)
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null
  } catch {
    return null
  }
}

function safeHref(href: string): string | null {
  if (href.startsWith('/') && !href.startsWith('//')) return href
  return safeUrl(href)
}

/**
 * Creates an element with properties and children.
 * @example h('a', { href: '/tests/x', class: 'link' }, name)
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  if (props) {
    for (const [key, value] of Object.entries(props) as [keyof Props, unknown][]) {
      if (value === undefined || value === null || value === false) continue
      if (key === 'class') el.className = value as string
      else if (key === 'on') {
        for (const [type, fn] of Object.entries(value as Record<string, EventListener>)) el.addEventListener(type, fn)
      } else if (key === 'dataset') Object.assign(el.dataset, value)
      else if (key === 'href') {
        const href = safeHref(value as string)
        if (href) el.setAttribute('href', href)
      } else if (key === 'checked' || key === 'disabled' || key === 'required') {
        ;(el as unknown as Record<string, boolean>)[key] = true
      } else if (key === 'value') (el as unknown as { value: string }).value = value as string
      else el.setAttribute(key, (value as string | number).toString())
    }
  }
  append(el, ...children)
  return el
}

export function append(el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c)
  }
}

/** A link that leaves the dashboard: a new tab that cannot reach back into this one. */
export function extLink(url: string | null | undefined, ...children: Child[]): HTMLAnchorElement | null {
  const href = safeUrl(url)
  return href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer', class: 'ext' }, ...children) : null
}

/** Replaces an element's children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren()
  append(el, ...children)
}

const SVG = 'http://www.w3.org/2000/svg'

/** An SVG element, attributes set one by one (numbers and fixed strings only). */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  append(el, ...children)
  return el
}
