import { retryingFetch, type RetryingFetchOptions } from '../http/retrying-fetch.js'
import { commentMarker } from './render.js'

/** Pages of 100 comments read to find ours: a bound, so that a misbehaving server cannot loop us forever. */
export const COMMENT_MAX_PAGES = 30

/**
 * Where the comment goes. GitHub: REST issue comments on the pull request. GitLab: merge-request notes.
 */
export type CommentTarget =
  | { provider: 'github'; apiUrl: string; repo: string; number: number; token: string }
  | {
      provider: 'gitlab'
      apiUrl: string
      project: string
      iid: number
      token: { kind: 'job' | 'private'; value: string }
    }

export interface PostCommentResult {
  ok: boolean
  action: 'created' | 'updated' | 'none'
  url: string | null
  error?: string
}

interface Endpoints {
  list: (page: number) => string
  create: string
  update: (id: number) => string
  updateMethod: 'PATCH' | 'PUT'
  headers: Record<string, string>
  htmlUrl: (c: { id: number; html_url?: string }) => string | null
}

function endpoints(t: CommentTarget): Endpoints {
  const base = t.apiUrl.replace(/\/+$/, '')
  if (t.provider === 'github') {
    const repo = `${base}/repos/${t.repo.split('/').map(encodeURIComponent).join('/')}`
    return {
      list: (page) => `${repo}/issues/${t.number}/comments?per_page=100&page=${page}`,
      create: `${repo}/issues/${t.number}/comments`,
      update: (id) => `${repo}/issues/comments/${id}`,
      updateMethod: 'PATCH',
      headers: {
        Authorization: `Bearer ${t.token}`,
        Accept: 'application/vnd.github+json',
        'X-GitHub-Api-Version': '2022-11-28',
      },
      htmlUrl: (c) => c.html_url ?? null,
    }
  }
  const notes = `${base}/projects/${encodeURIComponent(t.project)}/merge_requests/${t.iid}/notes`
  return {
    list: (page) => `${notes}?per_page=100&page=${page}&sort=asc&order_by=created_at`,
    create: notes,
    update: (id) => `${notes}/${id}`,
    updateMethod: 'PUT',
    headers: { [t.token.kind === 'job' ? 'JOB-TOKEN' : 'PRIVATE-TOKEN']: t.token.value },
    htmlUrl: () => null,
  }
}

/**
 * Creates the run's comment, or updates the one a previous run left (found by its hidden marker). Never throws:
 * the caller decides whether a failure may fail the build.
 * @example await upsertComment(target, body, { key: 'e2e' })
 */
export async function upsertComment(
  target: CommentTarget,
  body: string,
  opts: { key?: string } & RetryingFetchOptions = {},
): Promise<PostCommentResult> {
  const ep = endpoints(target)
  const marker = commentMarker(opts.key)
  const json = { ...ep.headers, 'Content-Type': 'application/json' }
  const fail = (error: string): PostCommentResult => ({ ok: false, action: 'none', url: null, error })
  let existing: number | null = null
  for (let page = 1; page <= COMMENT_MAX_PAGES; page++) {
    const r = await retryingFetch(ep.list(page), { headers: ep.headers }, opts)
    if (!r.ok) return fail(`listing comments: ${r.error}${hint(r.status, target)}`)
    const items = (await r.res.json().catch(() => null)) as { id: number; body?: string }[] | null
    if (!Array.isArray(items)) return fail('listing comments: the answer is not a list')
    // The last one with the marker wins, should two runs have raced to create one.
    for (const c of items) if (typeof c.body === 'string' && c.body.includes(marker)) existing = c.id
    if (items.length < 100) break
  }
  const payload = JSON.stringify({ body })
  const r =
    existing === null
      ? await retryingFetch(ep.create, { method: 'POST', headers: json, body: payload }, opts)
      : await retryingFetch(ep.update(existing), { method: ep.updateMethod, headers: json, body: payload }, opts)
  const what = existing === null ? 'creating the comment' : 'updating the comment'
  if (!r.ok) return fail(`${what}: ${r.error}${hint(r.status, target)}`)
  const made = (await r.res.json().catch(() => ({}))) as { id: number; html_url?: string }
  return { ok: true, action: existing === null ? 'created' : 'updated', url: ep.htmlUrl(made) }
}

function hint(status: number | undefined, t: CommentTarget): string {
  if (status === 401) return ' (the token was refused)'
  if (status === 403)
    return t.provider === 'github'
      ? ' (the token may not comment: give the job `permissions: pull-requests: write`)'
      : ' (the token may not comment: CI_JOB_TOKEN cannot write notes on most GitLab versions; use a project token)'
  if (status === 404) return ' (pull request, merge request or project not found, or not visible to the token)'
  return ''
}
