import { analysisOptions } from '../config/load.js'
import {
  applyPolicyCandidate,
  changedSettings,
  policySettings,
  type ChangedSetting,
  type PolicyCandidate,
  type PolicyConfig,
} from '../config/policy-candidate.js'
import { policyTest } from '../quarantine/from-analysis.js'
import { diffPolicies, type PolicyDiff, type PolicyOutcome } from '../quarantine/policy-diff.js'
import type { PolicyOutcomeJson, PolicyPreviewResponse, PolicyResponse } from '../server/api-types.js'
import type { PolicyTest } from '../quarantine/policy.js'
import type { HistoryFilter, Store } from '../store/store.js'
import { forEachAnalysis } from './analyze-store.js'

export interface PolicyPreview extends PolicyDiff {
  /** The settings the candidate changes; empty when it changes nothing. */
  settings: ChangedSetting[]
}

export interface PolicyPreviewOptions {
  /** Ends every analysis window here (default: the newest run, as `analyze`). */
  asOf?: number
  /** Wall clock, for quarantine expiry. */
  now?: number
  filter?: HistoryFilter
}

/** Every test of the store as a policy sees it, one scan, keeping only the policy's fields of each analysis. */
async function judge(store: Store, config: PolicyConfig, opts: PolicyPreviewOptions): Promise<PolicyTest[]> {
  const out: PolicyTest[] = []
  await forEachAnalysis(store, { config: analysisOptions(config), now: opts.asOf, filter: opts.filter }, (_, a) =>
    out.push(policyTest(a)),
  )
  return out
}

/**
 * What a candidate policy would change, before anyone commits it: the store analysed under the current config
 * and under the candidate (one scan each, nothing written), and the quarantine policy decided on each against
 * the quarantines in force. Read-only: the CLI's `analyze --policy --diff` and the dashboard's settings page.
 * @example const preview = await previewPolicy(store, config, { quarantine: { minScore: 0.4 } })
 */
export async function previewPolicy(
  store: Store,
  config: PolicyConfig,
  candidate: PolicyCandidate,
  opts: PolicyPreviewOptions = {},
): Promise<PolicyPreview> {
  const next = applyPolicyCandidate(config, candidate)
  const current = await judge(store, config, opts)
  const proposed = await judge(store, next, opts)
  const diff = diffPolicies({
    current,
    candidate: proposed,
    quarantines: await store.listQuarantines(),
    currentPolicy: config.quarantine,
    candidatePolicy: next.quarantine,
    now: opts.now ?? Date.now(),
  })
  return { ...diff, settings: changedSettings(config, next) }
}

/** The preview as JSON, snake_case like every other JSON flakewatch prints and serves. */
export function policyPreviewToJson(p: PolicyPreview): PolicyPreviewResponse {
  const outcome = (o: PolicyOutcome): PolicyOutcomeJson => ({
    verdict: o.verdict,
    reason: o.reason,
    action: o.action,
    action_reason: o.actionReason,
  })
  return {
    settings: p.settings,
    tests: p.tests,
    totals: {
      verdict_changed: p.totals.verdictChanged,
      would_quarantine: p.totals.wouldQuarantine,
      would_no_longer_quarantine: p.totals.wouldNoLongerQuarantine,
      would_release: p.totals.wouldRelease,
      would_no_longer_release: p.totals.wouldNoLongerRelease,
    },
    changes: p.changes.map((c) => ({
      test_id: c.testId,
      quarantined: c.quarantined,
      current: outcome(c.current),
      candidate: outcome(c.candidate),
      why: c.why,
    })),
  }
}

/**
 * The policy in force, as the settings page shows it: one setting per config key, the analysis engine's defaults
 * filled in (the keys are the config file's, so they are values here, not JSON keys).
 */
export function policyToJson(config: PolicyConfig): PolicyResponse {
  return { settings: policySettings(config) }
}
