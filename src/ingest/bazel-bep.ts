import { ReportLimitError } from '../errors.js'
import { MAX_OPEN_TESTS, type IngestLimits } from '../limits.js'
import type { Attempt, ResultStatus } from '../model.js'
import { checkedName, ownString } from './bounded-text.js'
import { collectReport, streamSteps } from './collect.js'
import { parseJsonLine, sourceLines } from './line-stream.js'
import { applyRunProperty } from './run-properties.js'
import { parseTimestamp } from './timestamps.js'
import type { ParsedCase, ParsedReport, ParsedStream, ParseOptions, ReportRunMeta, ReportSource } from './types.js'

/*
 * Bazel's Build Event Protocol as `--build_event_json_file` writes it: one BuildEvent per line (proto3 JSON, so
 * int64 values arrive as strings). Read: `started` (the invocation id, start time, host), `buildMetadata`
 * (`--build_metadata=KEY=VALUE`), `workspaceStatus`, each test target's `testResult` events (one per run, shard
 * and attempt: `--runs_per_test`, `--flaky_test_attempts`, sharding) and its `testSummary` (the overall status,
 * FLAKY included), and `buildFinished`.
 */
interface BepEvent {
  id?: {
    testResult?: { label?: string; run?: number; shard?: number; attempt?: number }
    testSummary?: { label?: string }
  }
  started?: { uuid?: string; startTimeMillis?: string | number; startTime?: string; command?: string }
  buildMetadata?: { metadata?: Record<string, string> }
  workspaceStatus?: { item?: { key?: string; value?: string }[] }
  testResult?: {
    status?: BepStatus
    statusDetails?: string
    testAttemptDurationMillis?: string | number
    testAttemptStartMillisEpoch?: string | number
    cachedLocally?: boolean
    executionInfo?: { cachedRemotely?: boolean }
    testActionOutput?: { name?: string; uri?: string }[]
  }
  testSummary?: {
    overallStatus?: BepStatus
    totalRunDurationMillis?: string | number
    firstStartTimeMillis?: string | number
  }
  finished?: { finishTimeMillis?: string | number; finishTime?: string }
}

/** BlazeTestStatus, as serialised. */
type BepStatus =
  | 'NO_STATUS'
  | 'PASSED'
  | 'FLAKY'
  | 'TIMEOUT'
  | 'FAILED'
  | 'INCOMPLETE'
  | 'REMOTE_FAILURE'
  | 'FAILED_TO_BUILD'
  | 'TOOL_HALTED_BEFORE_TESTING'

const STATUS: Record<BepStatus, ResultStatus> = {
  PASSED: 'passed',
  FLAKY: 'passed',
  FAILED: 'failed',
  TIMEOUT: 'failed',
  INCOMPLETE: 'error',
  REMOTE_FAILURE: 'error',
  FAILED_TO_BUILD: 'error',
  // Not run: the build stopped first, or nothing was reported.
  TOOL_HALTED_BEFORE_TESTING: 'skipped',
  NO_STATUS: 'skipped',
}

/**
 * `--build_metadata` keys that name run fields, as BuildBuddy and other BES services use them; `ci.*` and `env.*`
 * keys are read as in a JUnit report's properties.
 */
const METADATA_FIELDS: Record<string, string> = {
  COMMIT_SHA: 'ci.revision',
  BRANCH_NAME: 'ci.branch',
  BRANCH: 'ci.branch',
  HOST: 'ci.runner',
}

/** Workspace status keys (`--workspace_status_command`, Bazel's own) that name run fields. */
const WORKSPACE_FIELDS: Record<string, string> = {
  BUILD_SCM_REVISION: 'ci.revision',
  STABLE_GIT_COMMIT: 'ci.revision',
  BUILD_SCM_BRANCH: 'ci.branch',
  STABLE_GIT_BRANCH: 'ci.branch',
  BUILD_HOST: 'ci.runner',
}

interface TargetResult {
  run: number
  shard: number
  attempt: number
  status: ResultStatus
  timeout: boolean
  durationMs: number | null
  log: string | null
  cached: boolean
}

/**
 * Parses a Bazel Build Event Protocol JSON file whole.
 * @example const report = await parseBazelBep(sourceFromFile('bep.json'))
 */
export function parseBazelBep(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  return collectReport(streamBazelBep(source, opts))
}

/**
 * Streams a Bazel event file line by line. One case per test target, named (module and name alike) by the
 * target's path, `go/pkg/alfred_test` for `//go/pkg:alfred_test`, as Bazel's own test.xml names it. Each run and attempt is an attempt (shards of one attempt are one: the worst
 * of them); `testSummary`'s FLAKY is a pass on retry. A target whose every result came from the cache did not run in
 * this invocation and gives no case. The invocation id becomes the run id, so that the same event file ingested
 * twice is one run; build metadata and workspace status give the branch, revision and host.
 * @example for await (const chunk of streamBazelBep(sourceFromFile('bep.json')).cases) console.log(chunk.length)
 */
export const streamBazelBep: (source: ReportSource, opts?: ParseOptions) => ParsedStream = streamSteps(
  'bazel-bep',
  bepSteps,
)

async function* bepSteps(
  source: ReportSource,
  meta: ReportRunMeta,
  out: ParsedCase[],
  limits: IngestLimits,
): AsyncGenerator<void> {
  const file = source.name
  const maxAttempts = limits.maxAttemptsPerResult
  const targets = new Map<string, TargetResult[]>()
  const emit = (label: string, status: BepStatus | undefined) => {
    const results = targets.get(label) ?? []
    targets.delete(label)
    const c = toCase(label, results, status)
    if (c) out.push(c)
  }
  for await (const batch of sourceLines(source)) {
    for (const { text, number } of batch) {
      if (text.trim() === '') continue
      const e = parseJsonLine(file, number, text) as BepEvent
      if (typeof e !== 'object' || e === null) continue
      if (e.started) {
        if (typeof e.started.uuid === 'string' && e.started.uuid) meta.runId ??= ownString(e.started.uuid)
        meta.startedAt = parseTimestamp(millis(e.started.startTimeMillis)) ?? parseTimestamp(e.started.startTime)
      } else if (e.buildMetadata?.metadata && typeof e.buildMetadata.metadata === 'object') {
        for (const [key, value] of Object.entries(e.buildMetadata.metadata)) {
          if (typeof value === 'string') applyRunProperty(meta, METADATA_FIELDS[key] ?? key, value)
        }
      } else if (Array.isArray(e.workspaceStatus?.item)) {
        for (const item of e.workspaceStatus.item) {
          const field = item?.key ? WORKSPACE_FIELDS[item.key] : undefined
          if (field && typeof item.value === 'string') applyRunProperty(meta, field, item.value)
        }
      } else if (e.id?.testResult && e.testResult) {
        const label = checkedName(file, number, 'target label', e.id.testResult.label)
        let results = targets.get(label)
        if (!results) {
          if (targets.size >= MAX_OPEN_TESTS) {
            throw new ReportLimitError(
              file,
              `line ${number}: targets awaiting their summary`,
              MAX_OPEN_TESTS,
              undefined,
            )
          }
          targets.set(label, (results = []))
        }
        if (results.length >= maxAttempts) {
          throw new ReportLimitError(
            file,
            `line ${number}: testResult events of ${label.slice(0, 100)}`,
            maxAttempts,
            undefined,
          )
        }
        results.push(resultOf(e.id.testResult, e.testResult))
      } else if (e.id?.testSummary && e.testSummary) {
        emit(checkedName(file, number, 'target label', e.id.testSummary.label), e.testSummary.overallStatus)
      } else if (e.finished) {
        meta.finishedAt = parseTimestamp(millis(e.finished.finishTimeMillis)) ?? parseTimestamp(e.finished.finishTime)
      }
    }
    yield
  }
  // Targets without a summary (the stream was cut): their results decide.
  for (const label of [...targets.keys()]) emit(label, undefined)
  if (meta.startedAt && meta.finishedAt) {
    const ms = Date.parse(meta.finishedAt) - Date.parse(meta.startedAt)
    if (ms >= 0) meta.durationMs = ms
  }
}

/** proto3 JSON writes int64 as a string; some writers use numbers. */
function millis(value: string | number | undefined): number | null {
  if (value === undefined) return null
  const n = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN
  return Number.isFinite(n) ? n : null
}

function resultOf(
  id: NonNullable<NonNullable<BepEvent['id']>['testResult']>,
  r: NonNullable<BepEvent['testResult']>,
): TargetResult {
  const status = r.status && r.status in STATUS ? r.status : 'NO_STATUS'
  const log = r.testActionOutput?.find((o) => o?.name === 'test.log')?.uri
  return {
    run: Number(id.run ?? 1) || 1,
    shard: Number(id.shard ?? 1) || 1,
    attempt: Number(id.attempt ?? 1) || 1,
    status: STATUS[status],
    timeout: status === 'TIMEOUT',
    durationMs: millis(r.testAttemptDurationMillis),
    log: typeof log === 'string' ? ownString(log) : null,
    cached: r.cachedLocally === true || r.executionInfo?.cachedRemotely === true,
  }
}

const WORST: ResultStatus[] = ['error', 'failed', 'passed', 'skipped']

function toCase(label: string, results: TargetResult[], summary: BepStatus | undefined): ParsedCase | null {
  if (results.length > 0 && results.every((r) => r.cached)) return null
  // One attempt per (run, attempt); the shards of one attempt together are the worst of them.
  const byTry = new Map<string, TargetResult[]>()
  for (const r of [...results].sort((a, b) => a.run - b.run || a.attempt - b.attempt || a.shard - b.shard)) {
    const key = `${r.run}:${r.attempt}`
    const list = byTry.get(key)
    if (list) list.push(r)
    else byTry.set(key, [r])
  }
  const attempts: Attempt[] = []
  for (const shards of byTry.values()) {
    const status = WORST.find((s) => shards.some((r) => r.status === s)) ?? 'passed'
    const failing = shards.find((r) => r.status === 'failed' || r.status === 'error')
    const durations = shards.map((r) => r.durationMs).filter((d): d is number => d !== null)
    attempts.push({
      retry: attempts.length,
      status,
      durationMs: durations.length > 0 ? durations.reduce((a, b) => Math.max(a, b)) : null,
      message: failing ? failureMessage(failing) : null,
      stack: null,
    })
  }
  const lastStatus = attempts.at(-1)?.status
  const status: ResultStatus = summary ? STATUS[summary] : (lastStatus ?? 'skipped')
  const flakyOnRetry =
    summary === 'FLAKY' || (status === 'passed' && attempts.some((a) => a.status === 'failed' || a.status === 'error'))
  const shown = status === 'passed' && !flakyOnRetry ? undefined : attempts.findLast((a) => a.message !== null)
  const name = targetPath(label)
  const timeout = results.some((r) => r.timeout)
  return {
    module: name,
    name,
    file: null,
    status,
    flakyOnRetry,
    durationMs: attempts.reduce<number | null>(
      (sum, a) => (a.durationMs === null ? sum : (sum ?? 0) + a.durationMs),
      null,
    ),
    errorType: timeout && status !== 'passed' ? 'timeout' : null,
    message: shown?.message ?? (summary && status !== 'passed' && status !== 'skipped' ? summary : null),
    stack: null,
    healingOccurred: false,
    attempts: attempts.length > 1 ? attempts : [],
  }
}

/**
 * `//go/pkg:alfred_test` as Bazel names the target in the test.xml it writes for a test that writes none
 * (`<testsuite name="go/pkg/alfred_test">`, one `<testcase>` of the same name), so that both files of one run give
 * the target one id.
 */
function targetPath(label: string): string {
  const path = label.replace(/^@@?[^/]*\/\//, '').replace(/^\/\//, '')
  const colon = path.lastIndexOf(':')
  const pkg = colon < 0 ? path : path.slice(0, colon)
  const target = colon < 0 ? path.slice(path.lastIndexOf('/') + 1) : path.slice(colon + 1)
  return ownString(pkg === '' ? target : `${pkg}/${target}`)
}

function failureMessage(r: TargetResult): string {
  const what = r.timeout ? 'TIMEOUT' : r.status === 'error' ? 'ERROR' : 'FAILED'
  return r.log ? `${what}; test log: ${r.log}` : what
}
