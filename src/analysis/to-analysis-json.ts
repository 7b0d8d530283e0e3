import type { EnvFacets, Evidence, ResultStatus, VerdictKind } from '../model.js'
import type { FlipClass, PassRateClass, Priority, RecommendedAction, TestAnalysis } from './types.js'

/** The snake_case JSON the CLI prints and the API serves for one test. Rates are rounded to 4 decimals. */
export interface TestAnalysisJson {
  test_id: string
  runs: number
  passes: number
  failures: number
  skipped: number
  excluded_runs: number
  branch_breakage_runs: number
  pass_rate: number | null
  flip_rate: number
  ewma_flip_rate: number
  flip_rate_class: FlipClass
  score: number
  components: {
    intermittency: number
    rerun_pass_rate: number
    failure_clustering: number
    message_variance: number
    fail_success_ratio: number
    consecutive_failure_penalty: number
  }
  confidence: number
  recommendation: { action: RecommendedAction; priority: Priority; reason: string }
  pass_rate_class: PassRateClass
  success_rate: number | null
  verdict: VerdictKind
  reason: string
  evidence: { kind: Evidence['kind']; detail: string; run_ids?: string[]; revision?: string }[]
  failure_modes: {
    signature: string
    count: number
    first_seen: string
    last_seen: string
    first_run_id: string
    last_run_id: string
    error_type: string | null
    example: string | null
  }[]
  hints: { kind: string; message: string; [key: string]: unknown }[]
  contexts: {
    context: string
    facets: EnvFacets
    passes: number
    failures: number
    pass_rate: number | null
    pass_rate_class: PassRateClass
  }[]
  time_lost_ms: number
  last_status: ResultStatus | null
  first_run_at: string | null
  last_run_at: string | null
}

/**
 * The snake_case JSON form of an analysis, with ISO 8601 times.
 * @example JSON.stringify(analyses.map(toAnalysisJson))
 */
export function toAnalysisJson(a: TestAnalysis): TestAnalysisJson {
  const c = a.components
  return {
    test_id: a.testId,
    runs: a.runs,
    passes: a.passes,
    failures: a.failures,
    skipped: a.skipped,
    excluded_runs: a.excludedRuns,
    branch_breakage_runs: a.branchBreakageRuns,
    pass_rate: roundOrNull(a.passRate),
    flip_rate: round(a.flipRate),
    ewma_flip_rate: round(a.ewmaFlipRate),
    flip_rate_class: a.flipRateClass,
    score: round(a.score),
    components: {
      intermittency: round(c.intermittency),
      rerun_pass_rate: round(c.rerunPassRate),
      failure_clustering: round(c.failureClustering),
      message_variance: round(c.messageVariance),
      fail_success_ratio: round(c.failSuccessRatio),
      consecutive_failure_penalty: round(c.consecutiveFailurePenalty),
    },
    confidence: round(a.confidence),
    recommendation: { ...a.recommendation },
    pass_rate_class: a.passRateClass,
    success_rate: roundOrNull(a.successRate),
    verdict: a.verdict,
    reason: a.reason,
    evidence: a.evidence.map((e) => ({
      kind: e.kind,
      detail: e.detail,
      ...(e.runIds ? { run_ids: [...e.runIds] } : {}),
      ...(e.revision !== undefined ? { revision: e.revision } : {}),
    })),
    failure_modes: a.failureModes.map((m) => ({
      signature: m.signature,
      count: m.count,
      first_seen: iso(m.firstSeen),
      last_seen: iso(m.lastSeen),
      first_run_id: m.firstRunId,
      last_run_id: m.lastRunId,
      error_type: m.errorType,
      example: m.example,
    })),
    hints: a.hints.map(hintToJson),
    contexts: a.contexts.map((x) => ({
      context: x.context,
      facets: { ...x.facets },
      passes: x.passes,
      failures: x.failures,
      pass_rate: roundOrNull(x.passRate),
      pass_rate_class: x.passRateClass,
    })),
    time_lost_ms: Math.round(a.timeLostMs),
    last_status: a.lastStatus,
    first_run_at: a.firstRunAt === null ? null : iso(a.firstRunAt),
    last_run_at: a.lastRunAt === null ? null : iso(a.lastRunAt),
  }
}

/**
 * One hint as `analyze --json` writes it: kind, message and its evidence fields.
 * @example hintToJson(hint).p_value // 0.00047
 */
export function hintToJson(h: TestAnalysis['hints'][number]): TestAnalysisJson['hints'][number] {
  return { kind: h.kind, message: h.message, ...hintFields(h) }
}

/**
 * A hint's evidence fields in snake_case: times as ISO 8601, rates rounded, p-values kept to two significant digits
 * (rounding would turn a tiny p-value into 0), nested windows alike.
 */
function hintFields(h: object): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(h)) {
    if (key === 'kind' || key === 'message') continue
    const snake = key.replace(/[A-Z]/g, (ch) => `_${ch.toLowerCase()}`)
    const isTime = key === 'since' || key === 'from' || key === 'to'
    out[snake] = isTime
      ? iso(value as number)
      : /pValue$/.test(key) && typeof value === 'number'
        ? Number(value.toPrecision(2))
        : typeof value === 'number'
          ? round(value)
          : Array.isArray(value)
            ? value.map((x: unknown) => (x !== null && typeof x === 'object' ? hintFields(x) : x))
            : value
  }
  return out
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4
}

function roundOrNull(x: number | null): number | null {
  return x === null ? null : round(x)
}

function iso(at: number): string {
  return new Date(at).toISOString()
}
