import { z } from 'zod'
import { NOTIFICATION_EVENTS } from '../store/notifications.js'

const num = z.number()

/**
 * Keys a release removed, with what replaced them. A config that still sets one keeps loading (the key is ignored
 * and named in a warning) instead of failing on the strict schema: a team's CI should not break on an upgrade
 * for a setting that no longer does anything.
 */
export const REMOVED_CONFIG_KEYS = [
  {
    path: ['analysis', 'verdict', 'fixedMaxRuns'],
    replacedBy:
      'a fix is now earned by evidence, not by a run count: see analysis.verdict.fixedAlpha and ' +
      'fixedRateConfidence (docs/analysis.md, "Fixed means fixed")',
  },
  {
    path: ['analysis', 'verdict', 'fixedBaselineRuns'],
    replacedBy:
      "the old failure rate now comes from the test's whole history, bounded by " +
      'analysis.verdict.fixedRateConfidence (docs/analysis.md, "Fixed means fixed")',
  },
  {
    path: ['analysis', 'hints', 'timeOfDayBucketHours'],
    replacedBy:
      'time-of-day windows are now found at any start hour and width, with no buckets to set (docs/hints.md)',
  },
] as const satisfies readonly { path: readonly string[]; replacedBy: string }[]

/** A removed key: any value is accepted and ignored; the JSON Schema marks it deprecated for editors. */
function removedKey(section: string, key: string) {
  const entry = REMOVED_CONFIG_KEYS.find((k) => k.path[1] === section && k.path[2] === key)!
  return z.unknown().optional().meta({ deprecated: true, description: `Removed and ignored: ${entry.replacedBy}.` })
}
const unit = z.number().min(0).max(1)
const posInt = z.number().int().min(1)

/** Mirrors the analysis engine's `ResolvedAnalysisConfig`; every key optional, unknown keys rejected. */
const AnalysisSchema = z
  .object({
    flipRate: z
      .object({ window: z.number().int().min(2), ewmaAlpha: num.gt(0).max(1), ewmaWindow: z.number().int().min(2) })
      .partial()
      .strict(),
    scoring: z
      .object({
        rollingWindowSize: posInt,
        minRunsForScoring: posInt,
        lookbackDays: num.gt(0),
        recentFailureWindow: num.gt(0),
        minRecentFailures: z.number().int().min(0),
        quarantineThreshold: unit,
        investigationThreshold: unit,
        monitoringThreshold: unit,
        minConfidenceForQuarantine: unit,
        minConfidenceForAction: unit,
        weights: z
          .object({
            intermittency: num.min(0),
            rerunPassRate: num.min(0),
            failureClustering: num.min(0),
            messageVariance: num.min(0),
            failSuccessRatio: num.min(0),
            consecutiveFailurePenalty: num.min(0),
          })
          .partial()
          .strict(),
      })
      .partial()
      .strict(),
    verdict: z
      .object({
        brokenMinConsecutive: posInt,
        brokenAlpha: unit,
        fixedMinRuns: posInt,
        fixedAlpha: unit,
        fixedRateConfidence: num.gt(0).lt(1),
        fixedGapFactor: num.min(0),
        fixedEpisodeRuns: posInt,
        branchBreakageMinRuns: posInt,
        minFailureEpisodes: posInt,
        fixedMaxRuns: removedKey('verdict', 'fixedMaxRuns'),
        fixedBaselineRuns: removedKey('verdict', 'fixedBaselineRuns'),
      })
      .partial()
      .strict(),
    infra: z
      .object({ failedShare: num.gt(0).max(1), minTests: posInt })
      .partial()
      .strict(),
    hints: z
      .object({
        alpha: unit,
        minFailures: posInt,
        maxFailureModes: posInt,
        timeOfDayBucketHours: removedKey('hints', 'timeOfDayBucketHours'),
      })
      .partial()
      .strict(),
  })
  .partial()
  .strict()

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name')
const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'an http(s) URL')

/** Webhooks a config may list: each one is a delivery per event, so the count stays small. */
export const MAX_WEBHOOKS = 20

const WebhookSchema = z
  .object({
    /** Names the webhook in the delivery log. */
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'webhook names are 1–64 letters, digits, _ . or -'),
    /** The receiver. Slack's incoming-webhook URL is a secret: prefer `urlEnv` for it. */
    url: httpUrl.optional(),
    /** The environment variable that holds the URL. */
    urlEnv: envName.optional(),
    /** The HMAC-SHA256 key; better kept out of the file with `secretEnv`. */
    secret: z.string().min(16).optional(),
    secretEnv: envName.optional(),
    /** `json` (flakewatch's own payload) or `slack` (an incoming-webhook message). */
    format: z.enum(['json', 'slack']).optional(),
    /** Only these events (default: all). */
    events: z.array(z.enum(NOTIFICATION_EVENTS)).min(1).optional(),
    /** Only tests of these suites (default: all). */
    suites: z.array(z.string().min(1)).min(1).max(100).optional(),
  })
  .strict()
  .refine((w) => (w.url === undefined) !== (w.urlEnv === undefined), 'give exactly one of url and urlEnv')
  .refine((w) => !(w.secret !== undefined && w.secretEnv !== undefined), 'give at most one of secret and secretEnv')

const WebhooksSchema = z
  .array(WebhookSchema)
  .max(MAX_WEBHOOKS)
  .refine((ws) => new Set(ws.map((w) => w.name)).size === ws.length, 'webhook names must be unique')

/** A label as all three trackers take it: Jira's have no spaces. */
const ticketLabel = z.string().regex(/^[^\s,]{1,50}$/, 'labels are 1–50 characters, no spaces or commas')

/** Tickets in an issue tracker, one per test (docs/tickets.md). */
export const TicketsSchema = z
  .object({
    /** The tracker; its section below says where. */
    tracker: z.enum(['github', 'gitlab', 'jira']),
    github: z
      .object({
        /** `owner/name`. */
        repo: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'owner/name'),
        /** The REST API (GitHub Enterprise Server: `https://github.example.com/api/v3`). */
        apiUrl: httpUrl.optional(),
      })
      .strict()
      .optional(),
    gitlab: z
      .object({
        /** The project's path (`group/sub/project`) or numeric id. */
        project: z.string().min(1).max(300),
        /** The GitLab instance (default `https://gitlab.com`). */
        url: httpUrl.optional(),
      })
      .strict()
      .optional(),
    jira: z
      .object({
        /** The site (`https://acme.atlassian.net`, or a Server/Data Center base URL). */
        url: httpUrl,
        /** The project key (`SHOP`). */
        project: z.string().regex(/^[A-Z][A-Z0-9_]{0,49}$/, 'a Jira project key'),
        /** Default `Bug`. */
        issueType: z.string().min(1).max(100).optional(),
        /** `cloud` (REST v3, ADF, e-mail + API token) or `server` (Server/Data Center: REST v2, wiki markup, a personal access token). */
        deployment: z.enum(['cloud', 'server']).optional(),
      })
      .strict()
      .optional(),
    /** What opens a ticket: the test became flaky, or was quarantined (default both). */
    openOn: z
      .array(z.enum(['flaky', 'quarantined']))
      .min(1)
      .optional(),
    /** Labels every ticket gets, besides `flakewatch`. */
    labels: z.array(ticketLabel).max(20).optional(),
    /** Assign (or label) the ticket from CODEOWNERS (default true). */
    assignOwners: z.boolean().optional(),
    /** Comment when the test fails again (default true). */
    commentOnFailure: z.boolean().optional(),
    /** Tickets one sync pass works on at most; the rest wait for the next pass (default 50). */
    maxPerPass: z.number().int().min(1).max(1000).optional(),
  })
  .strict()
  .refine((t) => t[t.tracker] !== undefined, { message: 'the section of the chosen tracker is required' })

/** Projects one server may hold: each has its own store, tokens and analysis worker. */
export const MAX_PROJECTS = 500

/** A repository slug (`acme/shop`, `group/sub/repo`): letters, digits, `_ . - /`. */
export const PROJECT_KEY = /^[A-Za-z0-9][A-Za-z0-9_./-]{0,199}$/

const tokenName = z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/, 'token names are 1–64 letters, digits, _ . @ or -')

const ProjectSchema = z
  .object({
    /** The project's own store: a SQLite file, or a PostgreSQL URL (one `?schema=` per project). */
    db: z.string().min(1),
    /** Write tokens of this project only, name → token. */
    writeTokens: z.record(tokenName, z.string().min(8)).optional(),
    /** Reads of this project; required, so that one project's data is never open to another's users. */
    readToken: z.string().min(8),
    /** This project's webhooks, instead of `notifications.webhooks` (the other notification settings are shared). */
    webhooks: WebhooksSchema.optional(),
    /** This project's ticket tracker, instead of `tickets`. */
    tickets: TicketsSchema.optional(),
  })
  .strict()

const ProjectsSchema = z
  .record(z.string().regex(PROJECT_KEY, 'project keys are repository slugs: letters, digits, _ . - /'), ProjectSchema)
  .refine((p) => Object.keys(p).length <= MAX_PROJECTS, `at most ${MAX_PROJECTS} projects`)

const NotificationsSchema = z
  .object({
    webhooks: WebhooksSchema,
    /** Notify this many days before a quarantine expires. */
    expiringWithinDays: z.number().gt(0).max(365),
    /** The dashboard's URL, for links to test pages. */
    serverUrl: httpUrl.nullable(),
    /** Attempts per delivery before it is marked failed. */
    maxAttempts: z.number().int().min(1).max(50),
    /** The first retry's delay; it doubles on each retry, up to an hour. */
    backoffSeconds: z.number().min(0).max(3600),
    timeoutSeconds: z.number().gt(0).max(120),
    /** How often `serve` looks for state changes and sends due deliveries (0: never). */
    intervalSeconds: z.number().min(0).max(86_400),
  })
  .partial()
  .strict()

/**
 * The configuration file (`flakewatch.config.json`). Every key is optional; `defaults.ts` says what each one is
 * when absent. Unknown keys are errors, so that a typo does not silently do nothing.
 */
export const ConfigSchema = z
  .object({
    $schema: z.string().optional(),
    /** SQLite file or postgres:// URL. */
    db: z.string().min(1).optional(),
    /**
     * The repository root test paths are made relative to, relative to the working directory. Default: the git
     * repository around it.
     */
    root: z.string().min(1).optional(),
    /** Suite name used when neither --suite nor FLAKEWATCH_SUITE is given. */
    suite: z.string().min(1).optional(),
    /** The branch whose runs always count for success rates. */
    defaultBranch: z.string().min(1).optional(),
    analysis: AnalysisSchema.optional(),
    successRate: z
      .object({ days: z.number().gt(0), passedStatuses: z.array(z.string().min(1)) })
      .partial()
      .strict()
      .optional(),
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
        /** Quarantine every test with a flaky verdict (a flaky verdict means no fix has been earned). */
        onFlakyVerdict: z.boolean(),
        /** Least clean passes in a row before a release; the release itself needs a verdict that is no longer flaky. */
        releaseAfterPasses: z.number().int().min(1),
        /** Classes that release an auto-quarantined test. */
        releaseClasses: z.array(z.enum(['stable', 'intermittent', 'flaky', 'chronic'])),
        file: z.string().min(1),
        owner: z.string().nullable(),
      })
      .partial()
      .strict()
      .optional(),
    /** Code owners of tests, from the repository's CODEOWNERS (GitHub or GitLab syntax). */
    codeowners: z
      .object({
        /** The CODEOWNERS file, relative to the config file (default: searched where GitHub and GitLab look). */
        file: z.string().min(1).nullable(),
        /** `auto` reads GitLab syntax in `.gitlab/` or when sections or exclusions appear, else GitHub's. */
        dialect: z.enum(['auto', 'github', 'gitlab']),
        /** Ignore CODEOWNERS altogether. */
        enabled: z.boolean(),
      })
      .partial()
      .strict()
      .optional(),
    /** Many repositories on one server (docs/projects.md): project key → its store and tokens. */
    projects: ProjectsSchema.optional(),
    /** Webhooks on test state changes (docs/notifications.md). */
    notifications: NotificationsSchema.optional(),
    /** Tickets in GitHub, GitLab or Jira, one per flaky or quarantined test (docs/tickets.md). */
    tickets: TicketsSchema.optional(),
    server: z
      .object({
        host: z.string().min(1),
        port: z.number().int().min(0).max(65535),
        writeToken: z.string().min(8).nullable(),
        writeTokens: z.record(
          z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/, 'token names are 1–64 letters, digits, _ . @ or -'),
          z.string().min(8),
        ),
        readToken: z.string().min(8).nullable(),
        /** With `projects`: the project of a request that names none. */
        defaultProject: z.string().regex(PROJECT_KEY).nullable(),
        /** With `projects`: reads the organisation overview and the project list. */
        orgToken: z.string().min(8).nullable(),
        bodyLimitMb: z.number().gt(0).max(1024),
        uploadQueue: z.number().int().min(1).max(1000),
        uploadWorkers: z.number().int().min(1).max(16).nullable(),
      })
      .partial()
      .strict()
      .optional(),
  })
  .strict()

export type FlakewatchConfigInput = z.input<typeof ConfigSchema>
