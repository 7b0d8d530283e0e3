import type { InfraConfig } from './resolve-analysis-config.js'

/** The per-run counts the infrastructure-failure guard needs (a subset of the store's `RunSummary`). */
export interface RunFailureCounts {
  runId: string
  total: number
  failed: number
}

/**
 * Runs where so many tests failed that the cause is almost surely the infrastructure, not the tests. Pass the
 * result as `ctx.excludedRuns` so that one broken CI machine does not make every test look flaky.
 * @example infraRunIds([{ runId: 'r1', total: 10, failed: 9 }], { failedShare: 0.8, minTests: 5 }) // Set { 'r1' }
 */
export function infraRunIds(
  summaries: Iterable<RunFailureCounts>,
  cfg: { infra: InfraConfig } | InfraConfig,
): Set<string> {
  const { failedShare, minTests } = 'infra' in cfg ? cfg.infra : cfg
  const out = new Set<string>()
  for (const s of summaries) {
    if (s.total >= minTests && s.total > 0 && s.failed / s.total >= failedShare) out.add(s.runId)
  }
  return out
}
