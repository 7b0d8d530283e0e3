import { readFile } from 'node:fs/promises'
import { Writable } from 'node:stream'
import { DEFAULT_PACKAGE_NAME } from '../../export/bundle-types.js'
import { importBundleBytes } from '../../export/import-bundle.js'
import {
  fetchLatestBundle,
  publishToGitlab,
  type GitlabConnection,
  type GitlabToken,
  type PublishResult,
} from '../../export/publish-gitlab.js'
import type { BundleSummary } from '../../export/write-bundle.js'
import { jsonLine, type Io } from '../output.js'
import { bundleOptionsFromFlags, writeBundleFromFlags, type BundleFlags } from './export.js'
import { withStore } from '../with-store.js'

export interface PublishCommandOptions extends BundleFlags {
  url?: string
  project?: string
  package?: string
  token?: string
  /** Publish this bundle file instead of exporting one from the store. */
  file?: string
  keepDays?: string
  /** Add the runs of the newest published version to the store first, so that the history accumulates. */
  accumulate?: boolean
  strict?: boolean
  json?: boolean
}

/** What `publish gitlab` did. `ok: false` is a warning unless `--strict`. */
export interface PublishCommandResult {
  ok: boolean
  error?: string
  /** Set when the bundle was exported from the store (not `--file`). */
  bundle?: BundleSummary
  publish?: PublishResult
  /** With `--accumulate`: the version read back (null when none was published yet) and the runs it added. */
  accumulated?: { version: string | null; runs: number }
}

/**
 * Adds the runs of the newest published bundle that the store does not hold. Runs the store has from its own
 * reports are kept as they are: a bundle carries only pass/fail per run, so it could only coarsen them.
 */
async function accumulate(
  opts: PublishCommandOptions,
  io: Io,
  conn: GitlabConnection,
): Promise<{ ok: true; version: string | null; runs: number } | { ok: false; error: string }> {
  const latest = await fetchLatestBundle(conn)
  // Publishing without the earlier history would replace it with this job's runs alone: better not to publish.
  if (!latest.ok) return { ok: false, error: `--accumulate: could not read the published history: ${latest.error}` }
  if (latest.version === null) return { ok: true, version: null, runs: 0 }
  const { version, body } = latest
  return withStore(ownStore(opts), io, async (store) => {
    const skipRuns = new Set((await store.runSummaries()).map((r) => r.runId))
    const imported = await importBundleBytes(store, body, `published version ${version}`, { skipRuns })
    return { ok: true as const, version, runs: imported.runs }
  })
}

/** The local store: this command's `--project` is the GitLab project, not one of the config's projects. */
const ownStore = (opts: PublishCommandOptions) => ({ db: opts.db, config: opts.config })

/** `--token` is a personal/project access token; otherwise GitLab CI's own job token. */
export function gitlabToken(opts: { token?: string }, env: NodeJS.ProcessEnv): GitlabToken | null {
  if (opts.token) return { kind: 'private', value: opts.token }
  if (env.CI_JOB_TOKEN) return { kind: 'job', value: env.CI_JOB_TOKEN }
  return null
}

async function bundleBytes(opts: PublishCommandOptions, io: Io): Promise<{ body: Buffer; summary?: BundleSummary }> {
  if (opts.file) return { body: await readFile(opts.file) }
  const parts: Buffer[] = []
  const sink = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
      cb()
    },
  })
  const summary = await withStore(
    ownStore(opts),
    io,
    (store, config) => writeBundleFromFlags(store, config, opts, sink, true),
    'read',
  )
  return { body: Buffer.concat(parts), summary }
}

/**
 * `flakewatch publish gitlab`: exports the bundle (or takes `--file`) and uploads it as a new version of a
 * GitLab generic package, then prunes old versions. Never throws for a publishing problem: a dashboard upload
 * must not fail a test job unless the caller asks for that with `--strict`.
 */
export async function publish(opts: PublishCommandOptions, io: Io): Promise<PublishCommandResult> {
  try {
    const env = io.env
    const url = opts.url ?? env.CI_SERVER_URL ?? env.CI_API_V4_URL
    const project = opts.project ?? env.CI_PROJECT_ID
    const token = gitlabToken(opts, env)
    if (!url) return { ok: false, error: 'no GitLab URL: pass --url or run in GitLab CI (CI_SERVER_URL)' }
    if (!project) return { ok: false, error: 'no project: pass --project or run in GitLab CI (CI_PROJECT_ID)' }
    if (!token) return { ok: false, error: 'no GitLab token: pass --token or run in GitLab CI (CI_JOB_TOKEN)' }
    const keepDays = opts.keepDays === undefined ? undefined : Number(opts.keepDays)
    if (keepDays !== undefined && !Number.isInteger(keepDays)) {
      return { ok: false, error: `--keep-days must be a whole number, got "${opts.keepDays}"` }
    }
    bundleOptionsFromFlags(opts)
    const conn: GitlabConnection = {
      url,
      project,
      packageName: opts.package ?? DEFAULT_PACKAGE_NAME,
      token,
      onRetry: (what, attempt, reason) => io.stderr.write(`publish: ${what} failed (${reason}); retry ${attempt}\n`),
    }
    let accumulated: PublishCommandResult['accumulated']
    if (opts.accumulate) {
      if (opts.file) return { ok: false, error: '--accumulate adds to the store, so it cannot be used with --file' }
      const acc = await accumulate(opts, io, conn)
      if (!acc.ok) return { ok: false, error: acc.error }
      accumulated = { version: acc.version, runs: acc.runs }
    }
    const { body, summary } = await bundleBytes(opts, io)
    const result = await publishToGitlab({ ...conn, body, keepDays })
    return { ok: result.ok, error: result.error, bundle: summary, publish: result, accumulated }
  } catch (error) {
    return { ok: false, error: (error as Error).message }
  }
}

export function printPublish(r: PublishCommandResult, opts: PublishCommandOptions, io: Io): void {
  if (opts.json) io.stdout.write(`${jsonLine(r)}\n`)
  for (const w of r.publish?.warnings ?? []) io.stderr.write(`warning: ${w}\n`)
  if (r.ok && r.publish) {
    const p = r.publish
    const b = r.bundle
    const size = b ? ` (${b.runs} runs, ${b.tests} tests, ${(b.bytes / 1024 / 1024).toFixed(2)} MB)` : ''
    const acc = r.accumulated
    if (acc) {
      io.stderr.write(
        acc.version === null
          ? 'no earlier version published: this is the first\n'
          : `added ${acc.runs} run(s) from published version ${acc.version}\n`,
      )
    }
    io.stderr.write(`published ${opts.package ?? DEFAULT_PACKAGE_NAME} version ${p.version}${size}: ${p.fileUrl}\n`)
    if (p.pruned.length) io.stderr.write(`pruned ${p.pruned.length} old version(s)\n`)
    return
  }
  io.stderr.write(`${opts.strict ? 'error' : 'warning'}: publish failed: ${r.error ?? 'unknown error'}\n`)
  if (!opts.strict) io.stderr.write('(not failing the build; pass --strict to make this an error)\n')
}
