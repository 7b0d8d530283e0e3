import { passRateClass } from '../analysis/pass-rate-class.js'
import type { VerdictKind } from '../model.js'
import type { FlakeClassification } from './bundle-types.js'

/** How `overall.flake_classification` is decided: GitLabViz's pass-rate thresholds, or flakewatch's verdict. */
export type ClassificationMode = 'thresholds' | 'verdict'

export const CLASSIFICATION_MODES: readonly ClassificationMode[] = ['thresholds', 'verdict']

export interface BundleClassification {
  flake_classification: FlakeClassification
  is_flaky: boolean
}

/**
 * The reference GitLabViz classification: pass-rate thresholds, with `is_flaky` true exactly for the two
 * in-between classes (as in GitLabViz's own sample bundle).
 * @example classifyByThresholds(3, 1) // { flake_classification: 'intermittent', is_flaky: true }
 */
export function classifyByThresholds(pass: number, fail: number): BundleClassification {
  const flake_classification = passRateClass(pass, fail)
  const is_flaky = flake_classification === 'intermittent' || flake_classification === 'actively_flaky'
  return { flake_classification, is_flaky }
}

/**
 * flakewatch's verdict mapped onto GitLabViz's four classes, never contradicting the counts beside it:
 * - `healthy` is `stable`: a test that was fixed is stable even with old failures in the window.
 * - `broken` is `broken` only when the window holds no pass (GitLabViz: broken means no passes). A test that
 *   passed in the window and then broke (a fresh regression) gets the class its counts give, and `is_flaky: false`:
 *   flakewatch concluded it is not flaky, and the bundle's additive `verdict` field says `broken`.
 * - `flaky` is split by its pass rate, `intermittent` from 0.5 up (a test proven flaky by retries alone has no
 *   final failure: it is still flaky, mostly passing), `actively_flaky` below.
 * - `insufficient_data` keeps the threshold class (it says what happened) but is never called flaky.
 *
 * The mapping is documented in docs/flake-history.md.
 * @example classifyByVerdict('broken', 10, 4) // { flake_classification: 'intermittent', is_flaky: false }
 */
export function classifyByVerdict(verdict: VerdictKind, pass: number, fail: number): BundleClassification {
  switch (verdict) {
    case 'healthy':
      return { flake_classification: 'stable', is_flaky: false }
    case 'broken':
    case 'insufficient_data':
      return { flake_classification: passRateClass(pass, fail), is_flaky: false }
    case 'flaky': {
      const rate = pass + fail === 0 ? 1 : pass / (pass + fail)
      return { flake_classification: rate >= 0.5 ? 'intermittent' : 'actively_flaky', is_flaky: true }
    }
  }
}
