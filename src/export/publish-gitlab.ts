import { DEFAULT_PACKAGE_NAME } from './bundle-types.js'

const DAY_MS = 86_400_000
/** Versions younger than this are never pruned, whatever `keepDays` says: a viewer may be reading one. */
export const MIN_KEEP_DAYS = 7
/** Pages of 100 packages read while pruning: a bound, so that a misbehaving server cannot loop us forever. */
const MAX_PAGES = 50
/** The file name GitLabViz fetches from each package version. */
export const BUNDLE_FILE_NAME = 'bundle.json'

/** `JOB-TOKEN` for CI_JOB_TOKEN, `PRIVATE-TOKEN` for a personal, project or group access token. */
export type GitlabToken = { kind: 'job' | 'private'; value: string }

/** Where and how to reach a project's generic packages. */
export interface GitlabConnection {
  /** GitLab base URL, e.g. `https://gitlab.example.com` (a trailing `/api/v4` is accepted). */
  url: string
  /** Project id or full path (`group/sub/project`). */
  project: string
  /** Generic package name. Default `flake-history`, which GitLabViz reads. */
  packageName?: string
  token: GitlabToken
  /** Retries after a 5xx, 429, timeout or network error, with exponential backoff. Default 3. */
  retries?: number
  /** First backoff delay; it doubles on each retry. Default 500 ms. */
  backoffMs?: number
  /** Per-request timeout. Default 120 s (a bundle can be tens of MB on a slow runner). */
  timeoutMs?: number
  /** Told before each retry, for a log line. */
  onRetry?: (what: string, attempt: number, reason: string) => void
  /** Waits between retries; tests pass one that records the delays instead of waiting. */
  sleep?: (ms: number) => Promise<void>
}

export interface PublishGitlabOptions extends GitlabConnection {
  /** The bundle's bytes. */
  body: Uint8Array | string
  /** Epoch ms; the version is its unix time in seconds. Default `Date.now()`. */
  now?: number
  /** Prune package versions older than this many days (never fewer than 7). Default 14. */
  keepDays?: number
}

export interface PublishResult {
  ok: boolean
  /** Whether the bundle reached GitLab (it can have, even when pruning then failed). */
  uploaded: boolean
  version: string
  /** Where the uploaded file lives. */
  fileUrl: string
  /** Versions deleted by pruning. */
  pruned: string[]
  warnings: string[]
  error?: string
}

interface GitlabPackage {
  id: number
  name: string
  version: string
  package_type?: string
  created_at?: string
}

type Outcome = { ok: true; res: Response } | { ok: false; error: string; status?: number }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function apiBase(url: string): string {
  const u = new URL(url)
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error(`--url must be an http(s) URL, got "${url}"`)
  return `${u.origin}${u.pathname.replace(/\/+$/, '').replace(/\/api\/v4$/, '')}/api/v4`
}

/** A response body cut short and stripped of control characters, for an error line. */
async function snippet(res: Response): Promise<string> {
  const text = await res.text().catch(() => '')
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim()
  return clean ? `: ${clean.length > 200 ? `${clean.slice(0, 200)}…` : clean}` : ''
}

function explain(status: number, what: string, project: string, token: GitlabToken): string {
  const via = token.kind === 'job' ? 'CI_JOB_TOKEN (JOB-TOKEN)' : '--token (PRIVATE-TOKEN)'
  if (status === 401) return `${what}: GitLab rejected the token (401 Unauthorized); check ${via}`
  if (status === 403) return `${what}: the token may not do this (403 Forbidden); check the permissions of ${via}`
  if (status === 404) return `${what}: project "${project}" not found (404), or ${via} cannot see it`
  return `${what}: HTTP ${status}`
}

type Requester = (
  what: string,
  url: string,
  init: { method: string; body?: string | Uint8Array<ArrayBuffer>; contentType?: string },
) => Promise<Outcome>

/**
 * Checks the connection settings and returns the project's API URL, the package name and a requester that
 * retries 5xx, 429, timeouts and network errors with backoff; or the first settings error, before any request.
 */
function connect(opts: GitlabConnection): { project: string; pkg: string; request: Requester } | { error: string } {
  const pkg = opts.packageName ?? DEFAULT_PACKAGE_NAME
  let base: string
  try {
    base = apiBase(opts.url)
  } catch (error) {
    const message = (error as Error).message
    return { error: message.startsWith('--url') ? message : `--url is not a URL: "${opts.url}"` }
  }
  if (!opts.token.value) return { error: 'no GitLab token: pass --token or run in GitLab CI (CI_JOB_TOKEN)' }
  if (!/^[0-9A-Za-z._-]+$/.test(pkg)) return { error: `--package "${pkg}" is not a valid generic package name` }
  const project = `${base}/projects/${encodeURIComponent(opts.project)}`
  const headers = { [opts.token.kind === 'job' ? 'JOB-TOKEN' : 'PRIVATE-TOKEN']: opts.token.value }
  const retries = opts.retries ?? 3
  const backoff = opts.backoffMs ?? 500
  const timeoutMs = opts.timeoutMs ?? 120_000

  const request: Requester = async (what, url, init) => {
    const h = init.contentType ? { ...headers, 'Content-Type': init.contentType } : headers
    for (let attempt = 0; ; attempt++) {
      let reason: string
      try {
        const signal = AbortSignal.timeout(timeoutMs)
        const res = await fetch(url, { method: init.method, body: init.body, headers: h, signal })
        if (res.ok) return { ok: true, res }
        if (res.status < 500 && res.status !== 429) {
          const error = explain(res.status, what, opts.project, opts.token) + (await snippet(res))
          return { ok: false, status: res.status, error }
        }
        reason = `HTTP ${res.status}${await snippet(res)}`
      } catch (error) {
        // fetch's own message is just "fetch failed"; the socket error (ECONNREFUSED, ENOTFOUND) is in `cause`.
        const e = error as Error & { cause?: { code?: string; message?: string } }
        const cause = e.cause?.code ?? e.cause?.message ?? e.message
        reason = e.name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : cause
      }
      if (attempt >= retries) return { ok: false, error: `${what}: ${reason} (gave up after ${attempt + 1} attempts)` }
      opts.onRetry?.(what, attempt + 1, reason)
      await (opts.sleep ?? sleep)(backoff * 2 ** attempt)
    }
  }
  return { project, pkg, request }
}

/**
 * Uploads a bundle to the GitLab Generic Package registry as a new version (the unix time), then prunes older
 * versions of the same package: older than `keepDays` (at least 7 days kept), never the one just uploaded, and
 * never when the upload failed. Never throws: errors come back as `{ ok: false, error }`, so that the caller
 * decides whether publishing may fail a build.
 * @example const r = await publishToGitlab({ url, project: 'group/app', token: { kind: 'job', value }, body })
 */
export async function publishToGitlab(opts: PublishGitlabOptions): Promise<PublishResult> {
  const now = opts.now ?? Date.now()
  const version = String(Math.floor(now / 1000))
  const result: PublishResult = { ok: false, uploaded: false, version, fileUrl: '', pruned: [], warnings: [] }
  const conn = connect(opts)
  if ('error' in conn) return { ...result, error: conn.error }
  const { project, pkg, request } = conn

  result.fileUrl = `${project}/packages/generic/${encodeURIComponent(pkg)}/${version}/${BUNDLE_FILE_NAME}`
  const put = await request('upload', result.fileUrl, {
    method: 'PUT',
    // A copy with a plain ArrayBuffer behind it: what fetch's BodyInit accepts, whatever Buffer the caller had.
    body: typeof opts.body === 'string' ? opts.body : new Uint8Array(opts.body),
    contentType: 'application/json',
  })
  if (!put.ok) return { ...result, error: put.error }
  await put.res.arrayBuffer().catch(() => undefined)
  result.uploaded = true

  let keepDays = opts.keepDays ?? 14
  if (!(keepDays >= MIN_KEEP_DAYS)) {
    result.warnings.push(`--keep-days ${keepDays} is below the minimum; keeping ${MIN_KEEP_DAYS} days`)
    keepDays = MIN_KEEP_DAYS
  }
  const cutoff = now - keepDays * DAY_MS
  const old: GitlabPackage[] = []
  const query = `package_name=${encodeURIComponent(pkg)}&package_type=generic&per_page=100&order_by=created_at&sort=asc`
  for (let page = 1; page <= MAX_PAGES; page++) {
    const list = await request('list packages', `${project}/packages?${query}&page=${page}`, { method: 'GET' })
    if (!list.ok) return { ...result, error: `uploaded version ${version}, but pruning failed: ${list.error}` }
    let packages: GitlabPackage[]
    try {
      packages = (await list.res.json()) as GitlabPackage[]
      if (!Array.isArray(packages)) throw new Error('not a list')
    } catch {
      return { ...result, error: `uploaded version ${version}, but pruning failed: the package list is not JSON` }
    }
    for (const p of packages) {
      // GitLab's package_name filter matches substrings: `flake-history-old` must not be pruned with `flake-history`.
      if (p.name !== pkg || p.version === version) continue
      if (p.package_type !== undefined && p.package_type !== 'generic') continue
      const created = packageTime(p)
      if (created !== null && created < cutoff) old.push(p)
    }
    const next = list.res.headers.get('x-next-page')
    if (!next || packages.length === 0) break
    if (page === MAX_PAGES) {
      result.warnings.push(`more than ${MAX_PAGES * 100} package versions; pruned the oldest only`)
    }
  }
  for (const p of old) {
    const del = await request(`delete version ${p.version}`, `${project}/packages/${p.id}`, { method: 'DELETE' })
    // Already gone (another job pruned it first) is what we wanted.
    if (!del.ok && del.status !== 404) {
      return { ...result, error: `uploaded version ${version}, but pruning failed: ${del.error}` }
    }
    if (del.ok) await del.res.arrayBuffer().catch(() => undefined)
    result.pruned.push(p.version)
  }
  return { ...result, ok: true }
}

/** When a version was made: GitLab's `created_at`, else the version itself when it is a unix time; null if unknown. */
function packageTime(p: GitlabPackage): number | null {
  const t = p.created_at ? Date.parse(p.created_at) : NaN
  if (Number.isFinite(t)) return t
  return /^\d{9,11}$/.test(p.version) ? Number(p.version) * 1000 : null
}

/** Largest previous bundle `fetchLatestBundle` reads: GitLabViz itself loads the whole file into a browser. */
export const MAX_PREVIOUS_BUNDLE_BYTES = 512 * 1024 * 1024

export type LatestBundle =
  { ok: true; version: string; body: Buffer } | { ok: true; version: null } | { ok: false; error: string }

/**
 * Downloads the newest published version of the package's bundle, so that a CI job without a shared store can
 * add its runs to the history published before it (`publish gitlab --accumulate`). `version: null` when none has
 * been published yet. Never throws.
 * @example const prev = await fetchLatestBundle({ url, project: 'group/app', token })
 */
export async function fetchLatestBundle(opts: GitlabConnection): Promise<LatestBundle> {
  const conn = connect(opts)
  if ('error' in conn) return { ok: false, error: conn.error }
  const { project, pkg, request } = conn
  // GitLab's name filter matches substrings, so a page of the newest is read and the exact name picked from it.
  const query = `package_name=${encodeURIComponent(pkg)}&package_type=generic&per_page=100&order_by=created_at&sort=desc`
  const list = await request('list packages', `${project}/packages?${query}`, { method: 'GET' })
  if (!list.ok) return { ok: false, error: list.error }
  let packages: GitlabPackage[]
  try {
    packages = (await list.res.json()) as GitlabPackage[]
    if (!Array.isArray(packages)) throw new Error('not a list')
  } catch {
    return { ok: false, error: 'list packages: the package list is not JSON' }
  }
  const newest = packages
    .filter((p) => p.name === pkg && (p.package_type === undefined || p.package_type === 'generic'))
    .sort((a, b) => (packageTime(b) ?? 0) - (packageTime(a) ?? 0))[0]
  if (!newest) return { ok: true, version: null }
  const fileUrl = `${project}/packages/generic/${encodeURIComponent(pkg)}/${encodeURIComponent(newest.version)}/${BUNDLE_FILE_NAME}`
  const got = await request(`download version ${newest.version}`, fileUrl, { method: 'GET' })
  if (!got.ok) return { ok: false, error: got.error }
  const declared = Number(got.res.headers.get('content-length') ?? NaN)
  const tooBig = `download version ${newest.version}: larger than ${MAX_PREVIOUS_BUNDLE_BYTES} bytes (MAX_PREVIOUS_BUNDLE_BYTES)`
  if (declared > MAX_PREVIOUS_BUNDLE_BYTES) {
    await got.res.body?.cancel().catch(() => undefined)
    return { ok: false, error: tooBig }
  }
  const parts: Buffer[] = []
  let size = 0
  const reader = got.res.body?.getReader()
  for (let r = await reader?.read(); reader && r && !r.done; r = await reader.read()) {
    const chunk = r.value
    size += chunk.byteLength
    if (size > MAX_PREVIOUS_BUNDLE_BYTES) {
      await reader.cancel().catch(() => undefined)
      return { ok: false, error: tooBig }
    }
    parts.push(Buffer.from(chunk))
  }
  return { ok: true, version: newest.version, body: Buffer.concat(parts) }
}
