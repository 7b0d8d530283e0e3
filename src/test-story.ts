import type { TestAnalysisJson } from './analysis/to-analysis-json.js'

/**
 * One test's story, in the words every surface uses (`flakewatch show`, the dashboard's test page and
 * leaderboard): the verdict, what the runs did, what to do and on what grounds, and how to read the measures that
 * look only at final outcomes. The analysis decides; this only words it, so that no surface shows a number beside
 * a label it seems to contradict (a "stable" flip-rate class beside a flaky verdict, a weak score confidence
 * beside a strong recommendation, a failure count of 0 beside failure modes).
 */

type StoryInput = Pick<
  TestAnalysisJson,
  | 'verdict'
  | 'reason'
  | 'runs'
  | 'passes'
  | 'failures'
  | 'flip_rate_class'
  | 'pass_rate_class'
  | 'score'
  | 'confidence'
  | 'recommendation'
  | 'evidence'
  | 'failure_modes'
>

export type Strength = TestAnalysisJson['recommendation']['priority']

export interface TestStory {
  verdict: TestAnalysisJson['verdict']
  /** The verdict's word, the same on every surface. */
  verdictLabel: string
  /** What the runs did, final outcomes and retries together: "3 runs: 3 passed, 3 of them only on retry; 0 failed". */
  outcomes: string
  /** The recommended action's word (`ACTION_LABEL`). */
  action: string
  /** How strongly: never above `low` when the action rests on a score its confidence does not support. */
  strength: Strength
  /** Why: the proof, the failing streak, or the score with its confidence. */
  grounds: string
  /**
   * When the flip-rate or pass-rate class reads "stable" but the verdict is not healthy: why (they count final
   * outcomes, which retries hide). Null when they agree.
   */
  measuresNote: string | null
  /** How far the score can be trusted, in words. */
  scoreNote: string
  /** The failure-modes section: current failures, failed attempts that passed on retry, or earlier history. */
  failureModes: { title: string; note: string | null; unit: string }
}

/*
 * The words people read, one per machine value, for every surface (the CLI's tables and `show`, the dashboard's
 * chips and pages). JSON keeps the machine values (`insufficient_data`, `actively_flaky`, `stable`).
 */
export const VERDICT_LABEL: Record<TestAnalysisJson['verdict'], string> = {
  healthy: 'healthy',
  flaky: 'flaky',
  broken: 'broken',
  insufficient_data: 'too few runs',
}

/** The recommended action: `stable` is "nothing to do", which beside a class named stable read as a measure. */
export const ACTION_LABEL: Record<TestAnalysisJson['recommendation']['action'], string> = {
  stable: 'no action',
  monitor: 'monitor',
  investigate: 'investigate',
  quarantine: 'quarantine',
}

export const PASS_RATE_CLASS_LABEL: Record<TestAnalysisJson['pass_rate_class'], string> = {
  stable: 'stable',
  intermittent: 'intermittent',
  actively_flaky: 'actively flaky',
  broken: 'broken',
}

export const FLIP_RATE_CLASS_LABEL: Record<TestAnalysisJson['flip_rate_class'], string> = {
  stable: 'stable',
  intermittent: 'intermittent',
  flaky: 'flaky',
  chronic: 'chronic',
}

/** Below this score confidence the score alone never makes a recommendation stronger than `low` (config default). */
const TRUSTED_CONFIDENCE = 0.5

/** The evidence that proves a test flaky whatever its score, in words. */
const PROOF = {
  same_revision_pass_and_fail: 'passed and failed on one revision',
  pass_on_retry: 'passed on retry',
} as const

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** The story of one analysed test. Pure: the same analysis gives the same words on every surface. */
export function testStory(a: StoryInput): TestStory {
  const retried = a.evidence.find((e) => e.kind === 'pass_on_retry')
  const proof = a.evidence.find((e) => e.kind === 'same_revision_pass_and_fail') ?? retried
  const retryPasses = retried ? Number(/in (\d+) of/.exec(retried.detail)?.[1] ?? 0) : 0
  const outcomes =
    `${plural(a.runs, 'run')}: ${a.passes} passed` +
    (retryPasses > 0
      ? `, ${retryPasses === a.passes ? (a.passes === 1 ? 'only' : 'all') : retryPasses} of them only on retry`
      : '') +
    `; ${a.failures} failed`

  const r = a.recommendation
  let grounds: string
  let strength: Strength = r.priority
  if (a.verdict === 'broken') grounds = r.reason
  else if (a.verdict === 'flaky' && proof) grounds = `proven flaky (${PROOF[proof.kind as keyof typeof PROOF]})`
  else {
    grounds = r.reason
    if (a.confidence < TRUSTED_CONFIDENCE) strength = 'low'
  }

  const hidden = a.verdict === 'flaky' || a.verdict === 'broken'
  const calm = a.flip_rate_class === 'stable' || a.pass_rate_class === 'stable'
  const measuresNote =
    hidden && calm
      ? retryPasses > 0
        ? `the flip rate and the classes count final outcomes only: retries turned ${plural(retryPasses, 'failure')} into passes`
        : 'the flip rate and the classes measure the whole window; the verdict weighs the newest runs'
      : null

  const scoreNote =
    a.confidence >= TRUSTED_CONFIDENCE
      ? `score ${a.score.toFixed(2)} at confidence ${a.confidence.toFixed(2)}`
      : `score ${a.score.toFixed(2)}, not yet reliable (confidence ${a.confidence.toFixed(2)}: too few runs)`

  let failureModes: TestStory['failureModes']
  if (a.failures > 0) failureModes = { title: 'Failure modes', note: null, unit: 'failures' }
  else if (retryPasses > 0) {
    failureModes = {
      title: 'Failed attempts',
      note: 'No run failed: each of these attempts failed and a retry then passed.',
      unit: 'failed attempts',
    }
  } else {
    failureModes = {
      title: 'Earlier failure modes',
      note: 'No failure in this window: these are history.',
      unit: 'failures',
    }
  }

  return {
    verdict: a.verdict,
    verdictLabel: VERDICT_LABEL[a.verdict],
    outcomes,
    action: ACTION_LABEL[r.action],
    strength,
    grounds,
    measuresNote,
    scoreNote,
    failureModes,
  }
}

/** The recommendation in one line: "quarantine (priority high): proven flaky (passed on retry)". */
export function recommendationLine(s: TestStory): string {
  return `${s.action} (priority ${s.strength}): ${s.grounds}`
}
