import { ApiError, tokens } from './api.js'
import { h, replace } from './dom.js'
import { currentProject } from './project.js'

/** A page draws itself into `root` and returns what to undo when the user leaves it. */
export type Page = (root: HTMLElement) => (() => void) | void

/** Calls `fn` whenever the filters or other URL parameters change; returns the unsubscribe. */
export function onParams(fn: () => void): () => void {
  window.addEventListener('fw:params', fn)
  return () => window.removeEventListener('fw:params', fn)
}

/** A token form; the token stays in this tab's sessionStorage (`save`), then the page reloads with it. */
export function tokenForm(message: string, what: string, save: (token: string | null) => void): HTMLElement {
  const name = what.replace(/\s+/g, '-')
  const input = h('input', { type: 'password', name, placeholder: what, autocomplete: 'off', 'aria-label': what })
  return h(
    'form',
    {
      class: 'error-box token-form',
      on: {
        submit: (e) => {
          e.preventDefault()
          save(input.value.trim() || null)
          location.reload()
        },
      },
    },
    h('div', null, message),
    h('div', { class: 'row' }, input, h('button', { type: 'submit', class: 'primary' }, 'Use token')),
  )
}

/** Renders a failed load: a token form on 401, the server's message otherwise. */
export function errorView(error: unknown): HTMLElement {
  if (error instanceof ApiError && error.status === 401) {
    const project = currentProject()
    const whose = project === null ? 'This server' : `The project ${project}`
    return tokenForm(`${whose} needs a read token. ${error.message}`, 'read token', tokens.setRead)
  }
  const message = error instanceof Error ? error.message : String(error)
  return h('div', { class: 'error-box', role: 'alert' }, message)
}

/**
 * Loads data into an element: a loading note, then `render(data)`, or the error. Answers that arrive after a
 * newer load started are dropped, so fast filter changes never show stale data.
 */
export function loader<T>(
  el: HTMLElement,
  render: (data: T) => Node | Node[],
  renderError: (error: unknown) => HTMLElement = errorView,
) {
  let seq = 0
  return async (fetcher: () => Promise<T>, opts: { quiet?: boolean } = {}) => {
    const mine = ++seq
    if (!opts.quiet && !el.hasChildNodes()) replace(el, h('div', { class: 'loading' }, 'Loading…'))
    el.setAttribute('aria-busy', 'true')
    try {
      const data = await fetcher()
      if (mine !== seq) return
      const out = render(data)
      replace(el, ...(Array.isArray(out) ? out : [out]))
    } catch (error) {
      if (mine !== seq) return
      replace(el, renderError(error))
    } finally {
      if (mine === seq) el.removeAttribute('aria-busy')
    }
  }
}
