import { retryAfterMs, retryingFetch, type RetryingFetchOptions } from '../../http/retrying-fetch.js'

/** How a tracker's requests are retried, and where a rate limit is reported. */
export interface TrackerHttpOptions extends RetryingFetchOptions {
  /** Wall clock, for a rate limit's reset time. */
  now?: () => number
}

/**
 * What one tracker connection learnt about the tracker's rate limit: until when it asked to be left alone (epoch
 * ms), so that a sync pass stops there instead of spending every ticket's attempt on refusals.
 */
export interface RateLimitState {
  until: number | null
}

/** GitHub's primary limit answers 403/429 with `x-ratelimit-remaining: 0` and the reset time in epoch seconds. */
function limitedUntil(res: Response, now: number): number | null {
  const after = retryAfterMs(res.headers.get('retry-after'), now)
  if (after !== null) return now + after
  if (res.headers.get('x-ratelimit-remaining') === '0') {
    const reset = Number(res.headers.get('x-ratelimit-reset'))
    return Number.isFinite(reset) && reset > 0 ? reset * 1000 : now + 60_000
  }
  return res.status === 429 ? now + 60_000 : null
}

/**
 * A `fetch` for a tracker's client (Octokit's `request.fetch`, the GitLab requester): 5xx, 429, timeouts and network
 * errors are retried with backoff and `Retry-After` ({@link retryingFetch}); a rate limit that outlasts the retries
 * (429, or GitHub's 403 with its rate-limit headers) is written to `limit`.
 */
export function trackerFetch(opts: TrackerHttpOptions, limit: RateLimitState): typeof fetch {
  const now = opts.now ?? Date.now
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    const r = await retryingFetch(url, init ?? {}, opts)
    if (r.ok) return r.res
    if (!r.res) throw new Error(r.error)
    if (r.res.status === 429 || r.res.status === 403) {
      const until = limitedUntil(r.res, now())
      if (until !== null) limit.until = Math.max(limit.until ?? 0, until)
    }
    // A retried answer's body was already read away; the client gets the status and headers.
    if (r.res.bodyUsed || r.res.body?.locked || r.res.status === 429 || r.res.status >= 500) {
      return new Response(null, { status: r.res.status, statusText: r.res.statusText, headers: r.res.headers })
    }
    return r.res
  }
}

/** A tracker's refusal, with the HTTP status when there was one. */
export class TrackerError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message)
    this.name = 'TrackerError'
  }
}

/** The status of an error a client threw (Octokit's RequestError, Gitbeaker's GitbeakerRequestError), if any. */
export function statusOf(error: unknown): number | null {
  const e = error as { status?: unknown; cause?: { response?: { status?: unknown } } }
  if (typeof e?.status === 'number') return e.status
  const s = e?.cause?.response?.status
  return typeof s === 'number' ? s : null
}

/** One line for a client's error: the status and the tracker's message, cut short. */
export function describeError(what: string, error: unknown): TrackerError {
  const status = statusOf(error)
  // eslint-disable-next-line no-control-regex
  const text = String((error as Error)?.message ?? error).replace(/[\u0000-\u001f\u007f]+/g, ' ')
  const cut = text.length > 300 ? `${text.slice(0, 300)}…` : text
  return new TrackerError(`${what}: ${status === null ? '' : `HTTP ${status}: `}${cut}`, status)
}
