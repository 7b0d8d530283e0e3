import { readFile } from 'node:fs/promises'
import { extname } from 'node:path'
import { InputError } from '../../errors.js'
import { retryingFetch, type FetchOutcome } from '../../http/retrying-fetch.js'
import { expandInputs } from '../../pipeline/ingest-files.js'
import { projectKey } from '../../pipeline/project-key.js'
import type { RunContext } from '../../pipeline/run-context.js'
import { emitJson, type Io } from '../output.js'
import { repoRootFromFlags, runContextFromFlags, type RunFlags } from './ingest.js'

export interface UploadCommandOptions extends RunFlags {
  url?: string
  token?: string
  project?: string
  format?: string
  replace?: boolean
  strict?: boolean
  retries?: string
  json?: boolean
  output?: string
}

export interface UploadEntry {
  file: string
  status: number | null
  ok: boolean
  /** The server's JSON answer (the ingest summary), or the error that stopped the upload. */
  response?: unknown
  error?: string
}

/** The run context as the upload endpoint's query parameters, named like the CLI flags in snake_case. */
export function uploadQuery(
  ctx: RunContext,
  extra: { format?: string; replace?: boolean; name: string; root?: string | null },
): string {
  const q = new URLSearchParams()
  const put = (k: string, v: string | null | undefined) => {
    if (v !== undefined && v !== null && v !== '') q.append(k, v)
  }
  put('run_id', ctx.runId)
  put('suite', ctx.suite)
  put('branch', ctx.branch)
  put('revision', ctx.revision)
  put('pipeline_id', ctx.pipelineId)
  put('pipeline_url', ctx.pipelineUrl)
  put('job_id', ctx.jobId)
  put('job_url', ctx.jobUrl)
  put('job_status', ctx.jobStatus)
  put('pipeline_status', ctx.pipelineStatus)
  put('runner', ctx.runnerId)
  put('artifacts_url', ctx.artifactsUrl)
  put('run_status', ctx.status)
  for (const [k, v] of Object.entries(ctx.env ?? {})) q.append('env', `${k}=${v}`)
  put('format', extra.format)
  if (extra.replace) q.append('replace', 'true')
  put('name', extra.name)
  put('root', extra.root)
  return q.toString()
}

/** The content type the server parses a report under: XML for .xml and .trx, JSON otherwise. */
export function contentTypeFor(file: string): string {
  const ext = extname(file).toLowerCase()
  return ext === '.xml' || ext === '.trx' ? 'application/xml' : 'application/json'
}

/**
 * Sends report files to a `flakewatch serve` instance with the run context read from the CI, retrying 5xx and 429
 * (honouring Retry-After). A failed upload only warns, unless `--strict`: recording must never fail a build.
 */
export async function upload(inputs: string[], opts: UploadCommandOptions, io: Io): Promise<UploadEntry[]> {
  const base = opts.url ?? io.env.FLAKEWATCH_URL
  if (!base) throw new InputError('upload needs the server: --url or FLAKEWATCH_URL')
  if (!/^https?:\/\//i.test(base)) throw new InputError(`--url must be an http(s) URL, got "${base}"`)
  const token = opts.token ?? io.env.FLAKEWATCH_WRITE_TOKEN
  const retries = opts.retries === undefined ? undefined : Number(opts.retries)
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0 && retries <= 10))
    throw new InputError('--retries must be a whole number from 0 to 10')
  const { files, missing } = await expandInputs(inputs)
  if (missing.length) throw new InputError(`no report matches ${missing.map((m) => `"${m}"`).join(', ')}`)
  const context = runContextFromFlags(opts, io.env)
  // The server cannot know this checkout: it is told the root, so that ids match `flakewatch ingest` here.
  const root = repoRootFromFlags(opts, io.env)
  // Sent as a header, which a single-project server ignores: the same job works against either kind.
  const project = projectKey(opts.project, io.env)
  const endpoint = `${base.replace(/\/+$/, '')}/api/v1/reports`
  const entries: UploadEntry[] = []
  for (const file of files) {
    const body = await readFile(file)
    const query = uploadQuery(context, { format: opts.format, replace: opts.replace, name: file, root })
    const outcome = await retryingFetch(
      `${endpoint}?${query}`,
      {
        method: 'POST',
        headers: {
          'content-type': contentTypeFor(file),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(project ? { 'x-flakewatch-project': project } : {}),
        },
        body,
      },
      { retries, onRetry: (n, reason) => io.stderr.write(`upload ${file}: retry ${n} (${reason})\n`) },
    )
    const res = outcome.res
    const response: unknown = res ? await res.json().catch(() => undefined) : undefined
    entries.push(
      outcome.ok
        ? { file, status: outcome.res.status, ok: true, response }
        : {
            file,
            status: outcome.status ?? null,
            ok: false,
            response,
            error: serverError(outcome.error, response) + resetWhileSending(outcome, body.length),
          },
    )
  }
  return entries
}

export function printUpload(entries: UploadEntry[], opts: UploadCommandOptions, io: Io): void {
  if (opts.json)
    return emitJson(io, { uploaded: entries.filter((e) => e.ok), failed: entries.filter((e) => !e.ok) }, opts.output)
  for (const e of entries) {
    if (e.ok) io.stdout.write(`uploaded ${e.file} (${e.status})\n`)
    else io.stderr.write(`${opts.strict ? 'error' : 'warning'}: upload of ${e.file} failed: ${e.error}\n`)
  }
}

/**
 * A connection reset before an answer, while the report was being sent, is how a server (or a proxy before it)
 * that refuses a body too large answers when it does not read the rest: the 413 is lost with the connection. Said,
 * so that a user does not go looking for a network fault.
 */
function resetWhileSending(outcome: FetchOutcome, bytes: number): string {
  if (outcome.ok || outcome.status !== undefined || !/\b(EPIPE|ECONNRESET)\b/.test(outcome.error)) return ''
  const size = `${(bytes / (1024 * 1024)).toFixed(1)} MB`
  return (
    ` (the connection was reset before an answer, with the ${size} report sent or being sent: a server that ` +
    'refuses reports this large, over its server.bodyLimitMb, may answer so)'
  )
}

/**
 * The server's own words for a refusal (`{"error":{"message"}}`), beside the HTTP status. A 413 whose words were
 * lost (the connection closed under them) still says what it means.
 */
function serverError(status: string, response: unknown): string {
  const message = (response as { error?: { message?: unknown } } | undefined)?.error?.message
  if (typeof message === 'string') return `${status}: ${message}`
  return status === 'HTTP 413' ? `${status}: the report is larger than the server takes (server.bodyLimitMb)` : status
}
