import type { QuarantineJson } from '../server/api-types.js'
import { ApiError, tokens, write } from './api.js'
import { h } from './dom.js'
import './quarantine-dialog.css'

export interface QuarantineDialogOptions {
  testId: string
  testName: string
  mode: 'quarantine' | 'release'
  onDone: () => void
}

/**
 * Asks for a reason and the write token, then quarantines or releases. The token is kept only if the user ticks
 * the box, and then only in this tab's sessionStorage.
 */
export function openQuarantineDialog(opts: QuarantineDialogOptions): HTMLDialogElement {
  const quarantine = opts.mode === 'quarantine'
  const saved = tokens.write()
  const reason = h('textarea', {
    name: 'reason',
    rows: 3,
    required: true,
    placeholder: `Why ${quarantine ? 'quarantine' : 'release'} it? (kept in the audit log)`,
  })
  const token = h('input', {
    type: 'password',
    name: 'token',
    value: saved ?? '',
    autocomplete: 'off',
    placeholder: 'write token',
  })
  const remember = h('input', { type: 'checkbox', name: 'remember', checked: Boolean(saved) })
  const error = h('div', { class: 'dialog-error', role: 'alert' })
  error.hidden = true
  const submit = h(
    'button',
    { type: 'submit', class: quarantine ? 'primary' : 'danger' },
    quarantine ? 'Quarantine' : 'Release',
  )
  const dialog = h('dialog', { class: 'qdialog' })
  const close = () => {
    dialog.close()
    dialog.remove()
  }
  const form = h(
    'form',
    {
      on: {
        submit: (e) => {
          e.preventDefault()
          void send()
        },
      },
    },
    h('h2', null, quarantine ? 'Quarantine test' : 'Release from quarantine'),
    h('p', { class: 'dialog-test' }, opts.testName),
    h(
      'p',
      { class: 'muted dialog-help' },
      quarantine
        ? 'Its failures will stop failing the build until it is released or the quarantine expires.'
        : 'Its failures will fail the build again.',
    ),
    h('label', null, h('span', null, 'Reason'), reason),
    h('label', null, h('span', null, 'Write token'), token),
    h('label', { class: 'check' }, remember, h('span', null, 'Remember the token in this tab')),
    error,
    h('div', { class: 'dialog-actions' }, h('button', { type: 'button', on: { click: close } }, 'Cancel'), submit),
  )
  dialog.append(form)

  async function send() {
    error.hidden = true
    if (!reason.value.trim()) {
      error.textContent = 'A reason is required.'
      error.hidden = false
      return
    }
    submit.disabled = true
    try {
      const path = `/quarantine/${encodeURIComponent(opts.testId)}`
      // The audit trail names the write token's owner; the server takes no actor from the body.
      const body = { reason: reason.value.trim() }
      if (quarantine) await write<QuarantineJson>('PUT', path, body, token.value.trim())
      else await write('DELETE', path, body, token.value.trim())
      tokens.setWrite(remember.checked ? token.value.trim() : null)
      close()
      opts.onDone()
    } catch (e) {
      const refused = e instanceof ApiError && (e.status === 401 || e.status === 403)
      error.textContent = refused ? `Refused: ${e.message}` : e instanceof Error ? e.message : String(e)
      error.hidden = false
    } finally {
      submit.disabled = false
    }
  }

  document.body.append(dialog)
  dialog.addEventListener('close', () => dialog.remove())
  dialog.showModal()
  reason.focus()
  return dialog
}
