/** Retries after 5xx, 429, a timeout or a network error, at most this many times by default. */
export const DEFAULT_HTTP_RETRIES = 3
/** A server's `Retry-After` is honoured up to this long; a longer wait is not worth holding a CI job for. */
export const MAX_RETRY_AFTER_MS = 60_000

export interface RetryingFetchOptions {
  retries?: number
  /** First backoff delay; it doubles on each retry. Default 500 ms. */
  backoffMs?: number
  timeoutMs?: number
  onRetry?: (attempt: number, reason: string) => void
  sleep?: (ms: number) => Promise<void>
}

export type FetchOutcome = { ok: true; res: Response } | { ok: false; error: string; status?: number; res?: Response }

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** `Retry-After` as seconds or an HTTP date, in ms (null when absent or unreadable). */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const t = Date.parse(value)
  return Number.isNaN(t) ? null : Math.max(0, t - now)
}

/**
 * A failed fetch in words. Node's fetch says only "fetch failed"; its cause says what happened ("write EPIPE",
 * "read ECONNRESET", "other side closed", "connect ECONNREFUSED 127.0.0.1:8080").
 */
export function fetchErrorText(error: Error): string {
  const cause = (error as { cause?: unknown }).cause
  return cause instanceof Error && cause.message ? `${error.message}: ${cause.message}` : error.message
}

/**
 * `fetch` that retries 5xx, 429, timeouts and network errors with exponential backoff, honouring `Retry-After`
 * (capped at {@link MAX_RETRY_AFTER_MS}). Never throws: a final failure comes back as `{ ok: false }`.
 * @example const r = await retryingFetch('https://api.github.com/…', { method: 'POST', body }, { retries: 3 })
 */
export async function retryingFetch(
  url: string,
  init: RequestInit,
  opts: RetryingFetchOptions = {},
): Promise<FetchOutcome> {
  const retries = opts.retries ?? DEFAULT_HTTP_RETRIES
  const backoff = opts.backoffMs ?? 500
  const sleep = opts.sleep ?? defaultSleep
  for (let attempt = 0; ; attempt++) {
    let reason: string
    let wait = backoff * 2 ** attempt
    let failed: FetchOutcome
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000) })
      if (res.ok) return { ok: true, res }
      failed = { ok: false, status: res.status, error: `HTTP ${res.status}`, res }
      if (res.status !== 429 && res.status < 500) return failed
      reason = `HTTP ${res.status}`
      const after = retryAfterMs(res.headers.get('retry-after'))
      if (after !== null) wait = Math.min(after, MAX_RETRY_AFTER_MS)
      await res.body?.cancel().catch(() => {})
    } catch (error) {
      const e = error as Error
      reason = e.name === 'TimeoutError' ? 'timed out' : `network error: ${fetchErrorText(e)}`
      failed = { ok: false, error: reason }
    }
    if (attempt >= retries) return failed
    opts.onRetry?.(attempt + 1, reason)
    await sleep(wait)
  }
}
