import { InputError } from '../errors.js'

/** Longest issue link accepted: a URL, not a document. */
export const ISSUE_URL_MAX_LENGTH = 2000
/** Longest reason accepted: a sentence or two for the audit log. */
export const REASON_MAX_LENGTH = 2000

/**
 * An issue link is shown as a link in the dashboard and the step summary, so only http(s) is accepted: a
 * `javascript:` link would run in the reader's browser. One check for the CLI, the API and the file.
 * @example validateIssueUrl('https://github.com/acme/shop/issues/12', '--issue')
 */
export function validateIssueUrl(url: string | null | undefined, field: string): string | null {
  if (url === null || url === undefined || url === '') return null
  if (url.length > ISSUE_URL_MAX_LENGTH)
    throw new InputError(`${field}: longer than ${ISSUE_URL_MAX_LENGTH} characters`)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new InputError(`${field}: "${url.slice(0, 100)}" is not a URL (expected http:// or https://)`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InputError(`${field}: only http(s) links are accepted, got "${parsed.protocol}"`)
  }
  return url
}

/**
 * An expiry must be a valid time in the future: a quarantine that has already expired forgives nothing, so
 * accepting one would only look like it worked.
 * @example validateExpiry('2026-12-30T00:00:00Z', Date.now(), '--expires')
 */
export function validateExpiry(expiresAt: string | null | undefined, now: number, field: string): string | null {
  if (expiresAt === null || expiresAt === undefined) return null
  const t = Date.parse(expiresAt)
  if (Number.isNaN(t)) throw new InputError(`${field}: "${expiresAt.slice(0, 100)}" is not a date`)
  if (t <= now) {
    throw new InputError(
      `${field}: ${new Date(t).toISOString()} is in the past (now is ${new Date(now).toISOString()}); a quarantine needs a future expiry or none`,
    )
  }
  return new Date(t).toISOString()
}

/** A reason is required and kept short. */
export function validateReason(reason: string | undefined, field: string): string {
  const r = reason?.trim() ?? ''
  if (!r) throw new InputError(`${field}: a reason is required`)
  if (r.length > REASON_MAX_LENGTH) throw new InputError(`${field}: longer than ${REASON_MAX_LENGTH} characters`)
  return r
}
