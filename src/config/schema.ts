import { z } from 'zod'

const weights = z
  .object({
    intermittency: z.number().min(0),
    rerunPassRate: z.number().min(0),
    failureClustering: z.number().min(0),
    messageVariance: z.number().min(0),
    failSuccessRatio: z.number().min(0),
    consecutiveFailurePenalty: z.number().min(0),
  })
  .partial()

/**
 * The configuration file (`flakewatch.config.json`). Every key is optional; `defaults.ts` says what each one is
 * when absent. Unknown keys are errors, so that a typo does not silently do nothing.
 */
export const ConfigSchema = z
  .object({
    $schema: z.string().optional(),
    /** SQLite file or postgres:// URL. */
    db: z.string().min(1).optional(),
    /** Suite name used when neither --suite nor FLAKEWATCH_SUITE is given. */
    suite: z.string().min(1).optional(),
    /** The branch whose runs always count for success rates. */
    defaultBranch: z.string().min(1).optional(),
    analysis: z
      .object({
        flipWindow: z.number().int().min(2),
        ewmaAlpha: z.number().gt(0).max(1),
        ewmaWindow: z.number().int().min(2),
        rollingWindow: z.number().int().min(2),
        minRuns: z.number().int().min(1),
        lookbackDays: z.number().gt(0),
        recentFailureWindow: z.number().int().min(1),
        infraFailureRatio: z.number().gt(0).max(1),
        weights,
      })
      .partial()
      .strict()
      .optional(),
    successRate: z.object({ days: z.number().gt(0) }).partial().strict().optional(),
    quarantine: z
      .object({
        /** Let `quarantine auto` (and `serve`) quarantine and release by policy. */
        auto: z.boolean(),
        expiryDays: z.number().gt(0),
        /** At most this many tests quarantined at once; past it, flakewatch refuses loudly. */
        maxQuarantined: z.number().int().min(0),
        /** Classes that quarantine a flaky test. */
        classes: z.array(z.enum(['intermittent', 'flaky', 'chronic'])),
        minScore: z.number().min(0).max(1),
        minConfidence: z.number().min(0).max(1),
        /** Quarantine on proven evidence (a pass and a fail on one revision, a pass on retry). */
        onProvenEvidence: z.boolean(),
        releaseAfterPasses: z.number().int().min(1),
        /** Classes that release an auto-quarantined test. */
        releaseClasses: z.array(z.enum(['stable', 'intermittent', 'flaky', 'chronic'])),
        file: z.string().min(1),
        owner: z.string().nullable(),
      })
      .partial()
      .strict()
      .optional(),
    server: z
      .object({
        host: z.string().min(1),
        port: z.number().int().min(0).max(65535),
        writeToken: z.string().min(8).nullable(),
        readToken: z.string().min(8).nullable(),
        bodyLimitMb: z.number().gt(0).max(1024),
      })
      .partial()
      .strict()
      .optional(),
  })
  .strict()

export type FlakewatchConfigInput = z.input<typeof ConfigSchema>
