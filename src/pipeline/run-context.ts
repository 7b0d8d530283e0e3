import { InputError } from '../errors.js'
import type { EnvFacets, RunMeta, RunStatus } from '../model.js'

/** Run fields known before any report is read: from CLI flags, from `FLAKEWATCH_*`, or from the CI's own variables. */
export type RunContext = Partial<Omit<RunMeta, 'env'>> & { env?: EnvFacets }

type Env = Record<string, string | undefined>

const nonEmpty = (v: string | undefined): string | undefined => (v && v.trim() !== '' ? v : undefined)

function compact(ctx: RunContext): RunContext {
  const out: RunContext = {}
  for (const [k, v] of Object.entries(ctx)) if (v !== undefined && v !== '') (out as Record<string, unknown>)[k] = v
  return out
}

function facets(obj: Record<string, string | undefined>): EnvFacets {
  const out: EnvFacets = {}
  for (const [k, v] of Object.entries(obj)) if (v) out[k] = v
  return out
}

/** The CI system the variables describe, if any. */
export type CiProvider = 'github' | 'gitlab' | 'buildkite' | 'circleci' | 'jenkins'

export function detectCi(env: Env): CiProvider | null {
  if (env.GITHUB_ACTIONS === 'true') return 'github'
  if (env.GITLAB_CI) return 'gitlab'
  if (env.BUILDKITE === 'true') return 'buildkite'
  if (env.CIRCLECI === 'true') return 'circleci'
  if (env.JENKINS_URL || env.JENKINS_HOME) return 'jenkins'
  return null
}

/**
 * Reads run context from the variables each supported CI sets. Only what the CI really provides is filled in:
 * an unknown field stays unset rather than guessed. The run id is one CI job, so that several report files of
 * one job merge into one run.
 * @example ciRunContext({ GITLAB_CI: 'true', CI_JOB_ID: '42' }).runId // 'gitlab-42'
 */
export function ciRunContext(env: Env): RunContext {
  switch (detectCi(env)) {
    case 'github': {
      const server = env.GITHUB_SERVER_URL ?? 'https://github.com'
      const runUrl =
        env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID
          ? `${server}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}`
          : undefined
      return compact({
        runId: env.GITHUB_RUN_ID
          ? `github-${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? '1'}-${env.GITHUB_JOB ?? 'job'}`
          : undefined,
        branch: nonEmpty(env.GITHUB_HEAD_REF) ?? env.GITHUB_REF_NAME,
        revision: env.GITHUB_SHA,
        pipelineId: env.GITHUB_RUN_ID,
        pipelineUrl: runUrl,
        jobId: env.GITHUB_JOB,
        runnerId: env.RUNNER_NAME,
        env: facets({ os: env.RUNNER_OS?.toLowerCase(), arch: env.RUNNER_ARCH?.toLowerCase() }),
      })
    }
    case 'gitlab':
      return compact({
        runId: env.CI_JOB_ID ? `gitlab-${env.CI_JOB_ID}` : undefined,
        branch:
          nonEmpty(env.CI_MERGE_REQUEST_SOURCE_BRANCH_NAME) ?? nonEmpty(env.CI_COMMIT_BRANCH) ?? env.CI_COMMIT_REF_NAME,
        revision: env.CI_COMMIT_SHA,
        pipelineId: env.CI_PIPELINE_ID,
        pipelineUrl: env.CI_PIPELINE_URL,
        jobId: env.CI_JOB_ID,
        jobUrl: env.CI_JOB_URL,
        jobStatus: env.CI_JOB_STATUS,
        runnerId: nonEmpty(env.CI_RUNNER_DESCRIPTION) ?? env.CI_RUNNER_ID,
      })
    case 'buildkite':
      return compact({
        runId: env.BUILDKITE_JOB_ID ? `buildkite-${env.BUILDKITE_JOB_ID}` : undefined,
        branch: env.BUILDKITE_BRANCH,
        revision: env.BUILDKITE_COMMIT,
        pipelineId: env.BUILDKITE_BUILD_ID,
        pipelineUrl: env.BUILDKITE_BUILD_URL,
        jobId: env.BUILDKITE_JOB_ID,
        jobUrl:
          env.BUILDKITE_BUILD_URL && env.BUILDKITE_JOB_ID
            ? `${env.BUILDKITE_BUILD_URL}#${env.BUILDKITE_JOB_ID}`
            : undefined,
        runnerId: env.BUILDKITE_AGENT_NAME,
      })
    case 'circleci':
      return compact({
        runId: env.CIRCLE_WORKFLOW_JOB_ID
          ? `circleci-${env.CIRCLE_WORKFLOW_JOB_ID}`
          : env.CIRCLE_BUILD_NUM
            ? `circleci-${env.CIRCLE_BUILD_NUM}`
            : undefined,
        branch: env.CIRCLE_BRANCH,
        revision: env.CIRCLE_SHA1,
        pipelineId: env.CIRCLE_WORKFLOW_ID,
        jobId: env.CIRCLE_BUILD_NUM,
        jobUrl: env.CIRCLE_BUILD_URL,
        runnerId: env.CIRCLE_NODE_INDEX !== undefined ? `node-${env.CIRCLE_NODE_INDEX}` : undefined,
      })
    case 'jenkins':
      return compact({
        runId: env.BUILD_TAG ? `jenkins-${env.BUILD_TAG}` : undefined,
        branch: nonEmpty(env.CHANGE_BRANCH) ?? nonEmpty(env.BRANCH_NAME) ?? env.GIT_BRANCH,
        revision: env.GIT_COMMIT,
        pipelineId: env.BUILD_NUMBER,
        pipelineUrl: env.BUILD_URL,
        jobId: env.JOB_NAME,
        jobUrl: env.BUILD_URL,
        runnerId: env.NODE_NAME,
      })
    default:
      return {}
  }
}

/** `FLAKEWATCH_RUN_ID`, `FLAKEWATCH_SUITE`, `FLAKEWATCH_BRANCH` … set run fields explicitly in any CI. */
export function flakewatchEnvContext(env: Env): RunContext {
  const status = env.FLAKEWATCH_RUN_STATUS as RunStatus | undefined
  return compact({
    runId: env.FLAKEWATCH_RUN_ID,
    suite: env.FLAKEWATCH_SUITE,
    branch: env.FLAKEWATCH_BRANCH,
    revision: env.FLAKEWATCH_REVISION,
    pipelineId: env.FLAKEWATCH_PIPELINE_ID,
    pipelineUrl: env.FLAKEWATCH_PIPELINE_URL,
    jobId: env.FLAKEWATCH_JOB_ID,
    jobUrl: env.FLAKEWATCH_JOB_URL,
    artifactsUrl: env.FLAKEWATCH_ARTIFACTS_URL,
    jobStatus: env.FLAKEWATCH_JOB_STATUS,
    pipelineStatus: env.FLAKEWATCH_PIPELINE_STATUS,
    runnerId: env.FLAKEWATCH_RUNNER,
    status,
  })
}

/**
 * Layers contexts, later ones winning field by field; env facets merge key by key.
 * @example mergeContexts(ci, flags) // flags override CI values
 */
export function mergeContexts(...layers: RunContext[]): RunContext {
  const out: RunContext = {}
  let env: EnvFacets = {}
  for (const layer of layers) {
    for (const [k, v] of Object.entries(layer)) {
      if (k === 'env') env = { ...env, ...(v as EnvFacets) }
      else if (v !== undefined && v !== null && v !== '') (out as Record<string, unknown>)[k] = v
    }
  }
  if (Object.keys(env).length) out.env = env
  return out
}

/** The run context from the environment alone: CI variables, overridden by `FLAKEWATCH_*`. */
export function envRunContext(env: Env = process.env): RunContext {
  return mergeContexts(ciRunContext(env), flakewatchEnvContext(env))
}

/** Parses `--env key=value` pairs. */
export function parseEnvPairs(pairs: string[] = []): EnvFacets {
  const out: EnvFacets = {}
  for (const pair of pairs) {
    const eq = pair.indexOf('=')
    const key = eq < 0 ? '' : pair.slice(0, eq).trim()
    // A usage error (exit 2), not a crash: the value comes straight from the command line.
    if (key === '') throw new InputError(`--env expects key=value, got "${pair.slice(0, 200)}"`)
    out[key] = pair.slice(eq + 1).trim()
  }
  return out
}

/**
 * A complete run from what is known of it: every field the context leaves out is null (never guessed), facets
 * default to none and the status to `complete`. An interrupted run has no finish time.
 * @example toRunMeta('gitlab-42', 'unit', { branch: 'main' }).revision // null
 */
export function toRunMeta(runId: string, suite: string, ctx: RunContext = {}): RunMeta {
  const status = ctx.status ?? 'complete'
  return {
    runId,
    suite,
    branch: ctx.branch ?? null,
    revision: ctx.revision ?? null,
    pipelineId: ctx.pipelineId ?? null,
    pipelineUrl: ctx.pipelineUrl ?? null,
    jobId: ctx.jobId ?? null,
    jobUrl: ctx.jobUrl ?? null,
    artifactsUrl: ctx.artifactsUrl ?? null,
    jobStatus: ctx.jobStatus ?? null,
    pipelineStatus: ctx.pipelineStatus ?? null,
    runnerId: ctx.runnerId ?? null,
    env: ctx.env ?? {},
    startedAt: ctx.startedAt ?? null,
    finishedAt: status === 'interrupted' ? null : (ctx.finishedAt ?? null),
    durationMs: ctx.durationMs ?? null,
    status,
  }
}
