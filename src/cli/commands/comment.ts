import { existsSync, readFileSync } from 'node:fs'
import type { Result } from '../../model.js'
import { loadConfig } from '../../config/load.js'
import { printConfigWarnings } from '../project-option.js'
import { InputError } from '../../errors.js'
import type { ClassifiedFailure } from '../../comment/classify.js'
import { triageFailures } from '../../pipeline/triage-failures.js'
import { upsertComment, type CommentTarget, type PostCommentResult } from '../../comment/providers.js'
import { renderComment } from '../../comment/render.js'
import type { GateTotals, RunScope } from '../../quarantine/gate.js'
import type { QuarantineRecord, QuarantineRule, Store } from '../../store/store.js'
import { emitJson, type Io } from '../output.js'
import type { GateCommandOptions } from './gate.js'

export interface CommentOptions {
  provider?: 'github' | 'gitlab'
  /** Pull request number (GitHub) or merge request iid (GitLab). */
  pr?: string
  /** GitHub `owner/repo`. */
  repo?: string
  /** GitLab project id or path. */
  project?: string
  token?: string
  apiUrl?: string
  serverUrl?: string
  key?: string
  strict?: boolean
  dryRun?: boolean
}

export interface CommentCommandOptions extends GateCommandOptions, CommentOptions {
  config?: string
}

export interface CommentOutcome extends PostCommentResult {
  failures: ClassifiedFailure[]
  body: string
}

/** The pull request number from the GitHub event that started the workflow. */
function githubEventNumber(env: NodeJS.ProcessEnv): number | null {
  const path = env.GITHUB_EVENT_PATH
  if (!path || !existsSync(path)) return null
  try {
    const event = JSON.parse(readFileSync(path, 'utf8')) as {
      pull_request?: { number?: number }
      issue?: { number?: number; pull_request?: unknown }
      number?: number
    }
    const n = event.pull_request?.number ?? (event.issue?.pull_request ? event.issue.number : undefined) ?? event.number
    return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : null
  } catch {
    return null
  }
}

const positive = (v: string | undefined): number | null => (v && /^\d+$/.test(v) && Number(v) > 0 ? Number(v) : null)

/**
 * Where to comment, from flags first, then the CI's variables. Throws an InputError naming what is missing (the
 * command turns it into a warning unless --strict).
 */
export function resolveCommentTarget(opts: CommentOptions, env: NodeJS.ProcessEnv): CommentTarget {
  const provider = opts.provider ?? (env.GITLAB_CI ? 'gitlab' : env.GITHUB_ACTIONS ? 'github' : undefined)
  if (!provider) throw new InputError('comment: not in GitHub Actions or GitLab CI; pass --provider github|gitlab')
  if (provider === 'github') {
    const repo = opts.repo ?? env.GITHUB_REPOSITORY
    const number = positive(opts.pr) ?? githubEventNumber(env)
    const token = opts.token ?? env.FLAKEWATCH_GITHUB_TOKEN ?? env.GITHUB_TOKEN
    if (!repo) throw new InputError('comment: no repository (--repo owner/name or GITHUB_REPOSITORY)')
    if (!number) throw new InputError('comment: no pull request (--pr, or a pull_request event in GITHUB_EVENT_PATH)')
    if (!token) throw new InputError('comment: no token (--token or GITHUB_TOKEN)')
    return { provider, apiUrl: opts.apiUrl ?? env.GITHUB_API_URL ?? 'https://api.github.com', repo, number, token }
  }
  const apiUrl = opts.apiUrl ?? env.CI_API_V4_URL
  const project = opts.project ?? env.CI_PROJECT_ID
  const iid = positive(opts.pr) ?? positive(env.CI_MERGE_REQUEST_IID)
  const privateToken = opts.token ?? env.FLAKEWATCH_GITLAB_TOKEN
  const token = privateToken
    ? ({ kind: 'private', value: privateToken } as const)
    : env.CI_JOB_TOKEN
      ? ({ kind: 'job', value: env.CI_JOB_TOKEN } as const)
      : null
  if (!apiUrl) throw new InputError('comment: no GitLab API URL (--api-url or CI_API_V4_URL)')
  if (!project) throw new InputError('comment: no project (--project or CI_PROJECT_ID)')
  if (!iid)
    throw new InputError('comment: no merge request (--pr or CI_MERGE_REQUEST_IID: run in a merge request pipeline)')
  if (!token) throw new InputError('comment: no token (--token, FLAKEWATCH_GITLAB_TOKEN or CI_JOB_TOKEN)')
  return { provider, apiUrl, project, iid, token }
}

/**
 * Classifies the run's failures against the quarantines and rules (forgiven exactly as the gate forgives them)
 * and the stored history of those tests.
 */
async function classify(
  results: Result[],
  scopes: ReadonlyMap<Result, RunScope> | undefined,
  opts: CommentCommandOptions,
  io: Io,
): Promise<ClassifiedFailure[]> {
  const config = loadConfig({ file: opts.config, env: io.env })
  printConfigWarnings(config, io)
  const interesting = results.some((r) => r.status === 'failed' || r.status === 'error' || r.flakyOnRetry)
  let fromFile: { quarantines: QuarantineRecord[]; rules: QuarantineRule[] } = {
    quarantines: [],
    rules: [],
  }
  if (opts.quarantineFile && existsSync(opts.quarantineFile)) {
    const { readQuarantineFile } = await import('../../quarantine/file.js')
    const read = readQuarantineFile(opts.quarantineFile)
    fromFile = { quarantines: read.records, rules: read.rules }
  }
  const db = opts.db ?? config.db
  const triage = (store: Store | null) =>
    triageFailures(store, results, {
      config,
      scopes,
      branch: opts.branch ?? null,
      // A quarantine file, when given, says what is quarantined; the store then gives only the history.
      ...(opts.quarantineFile ? fromFile : {}),
    })
  if (interesting && (opts.db || !opts.quarantineFile) && (/^postgres/.test(db) || existsSync(db))) {
    const { openStore } = await import('../../store/open.js')
    const store = await openStore({ db, env: {} })
    try {
      return await triage(store)
    } finally {
      await store.close()
    }
  }
  return triage(null)
}

/** A job's results as the comment needs them: the failures and passes on retry, each with its run, and the counts. */
export interface CommentJob {
  /** At least every failed, errored or passed-on-retry result (others are ignored). */
  results: Result[]
  /** The run of each result, for rules on branch and facets (from `readJobResults`). */
  scopes?: ReadonlyMap<Result, RunScope>
  totals: Pick<GateTotals, 'tests' | 'failed'>
}

/**
 * Posts (or updates) the pull-request comment for a run's results. Never throws for a posting problem: it comes
 * back as `{ ok: false, error }`, and only `--strict` makes the caller fail.
 */
export async function commentOnResults(job: CommentJob, opts: CommentCommandOptions, io: Io): Promise<CommentOutcome> {
  const failures = await classify(job.results, job.scopes, opts, io)
  const body = renderComment(failures, {
    key: opts.key,
    serverUrl: opts.serverUrl ?? io.env.FLAKEWATCH_SERVER_URL,
    title: opts.suite ?? io.env.FLAKEWATCH_SUITE,
    totals: { tests: job.totals.tests, failed: job.totals.failed },
    runUrl: opts.jobUrl ?? ciJobUrl(io.env),
  })
  if (opts.dryRun) return { ok: true, action: 'none', url: null, failures, body }
  let target: CommentTarget
  try {
    target = resolveCommentTarget(opts, io.env)
  } catch (error) {
    return { ok: false, action: 'none', url: null, failures, body, error: (error as Error).message }
  }
  const posted = await upsertComment(target, body, {
    key: opts.key,
    onRetry: (n, why) => io.stderr.write(`flakewatch comment: retry ${n} after ${why}\n`),
  })
  return { ...posted, failures, body }
}

function ciJobUrl(env: NodeJS.ProcessEnv): string | null {
  if (env.CI_JOB_URL) return env.CI_JOB_URL
  if (env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID)
    return `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`
  return null
}

/** `flakewatch comment <reports…>`. */
export async function comment(reports: string[], opts: CommentCommandOptions, io: Io): Promise<CommentOutcome> {
  const { readJobResults } = await import('./gate.js')
  return commentOnResults(await readJobResults(reports, opts, io), opts, io)
}

export function printComment(outcome: CommentOutcome, opts: CommentCommandOptions & { json?: boolean }, io: Io): void {
  if (opts.json) {
    const { failures, ...rest } = outcome
    return emitJson(io, {
      ...rest,
      failures: failures.map((f) => ({
        kind: f.kind,
        test_id: f.testId,
        broken_since: f.brokenSince,
        quarantined: f.quarantine !== null,
        rule: f.quarantine?.rule ?? null,
        evidence: f.evidence.map((e) => e.kind),
      })),
    })
  }
  if (opts.dryRun) return void io.stdout.write(outcome.body)
  if (outcome.ok) io.stderr.write(`flakewatch comment: ${outcome.action}${outcome.url ? ` ${outcome.url}` : ''}\n`)
  else io.stderr.write(`flakewatch comment: not posted: ${outcome.error}\n`)
}
