import { API_PREFIX, type ErrorBody } from '../server/api-types.js'
import { currentProject } from './project.js'

/** A failed API call, with the server's error code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

const READ_TOKEN_KEY = 'flakewatch.readToken'
const WRITE_TOKEN_KEY = 'flakewatch.writeToken'
const ORG_TOKEN_KEY = 'flakewatch.orgToken'

/** Each project has its own tokens (docs/projects.md): they are kept per project, under the project's key. */
function scoped(key: string): string {
  const project = currentProject()
  return project === null ? key : `${key}@${project}`
}

/** The project's own token, else the one given without a project (a token some projects share). */
function recall(key: string): string | null {
  return sessionStorage.getItem(scoped(key)) ?? sessionStorage.getItem(key)
}

function keep(key: string, token: string | null): void {
  if (token) sessionStorage.setItem(key, token)
  else sessionStorage.removeItem(key)
}

/** Tokens live in sessionStorage at most: gone when the tab closes, never in localStorage or cookies. */
export const tokens = {
  read: () => recall(READ_TOKEN_KEY),
  setRead: (t: string | null) => keep(scoped(READ_TOKEN_KEY), t),
  write: () => recall(WRITE_TOKEN_KEY),
  setWrite: (t: string | null) => keep(scoped(WRITE_TOKEN_KEY), t),
  /** The organisation token: the project list and the overview of a multi-project server. */
  org: () => sessionStorage.getItem(ORG_TOKEN_KEY),
  setOrg: (t: string | null) => keep(ORG_TOKEN_KEY, t),
}

export type Params = Record<string, string | number | boolean | string[] | undefined | null>

export function query(params: Params = {}): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue
    if (Array.isArray(v)) for (const item of v) q.append(k, item)
    else q.set(k, String(v))
  }
  const s = q.toString()
  return s ? `?${s}` : ''
}

interface CallOptions {
  params?: Params
  body?: unknown
  token?: string | null
}

async function call<T>(method: string, path: string, opts: CallOptions): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  const token = opts.token ?? tokens.read()
  if (token) headers.authorization = `Bearer ${token}`
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  // Every call names the page's project, so that each view shows the project in its URL.
  const params = { project: currentProject(), ...opts.params }
  const res = await fetch(`${API_PREFIX}${path}${query(params)}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  })
  const data = (await res.json().catch(() => null)) as unknown
  if (!res.ok) {
    const err = (data as ErrorBody | null)?.error
    throw new ApiError(res.status, err?.code ?? 'FW_HTTP', err?.message ?? `${res.status} ${res.statusText}`)
  }
  return data as T
}

export const get = <T>(path: string, params?: Params) => call<T>('GET', path, { params })

/** A POST that only reads (a policy preview): sent with the read token, as a GET. */
export const post = <T>(path: string, body: unknown) => call<T>('POST', path, { body })

/** A read with another token than the project's read token (the organisation token). */
export const getAs = <T>(path: string, token: string | null) => call<T>('GET', path, { token })

/** A write: the token is the one the user typed, not the read token. */
export const write = <T>(method: 'PUT' | 'DELETE' | 'POST', path: string, body: unknown, token: string) =>
  call<T>(method, path, { body, token })

/** Test ids carry any character, `/` included: one path segment, fully encoded. */
export const testPath = (testId: string) => `/tests/${encodeURIComponent(testId)}`
