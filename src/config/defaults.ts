import type { NotificationEvent } from '../store/notifications.js'

/** One project of a multi-project server. */
export interface ProjectConfig {
  db: string
  writeTokens?: Record<string, string>
  readToken: string
  /** Replaces `notifications.webhooks` for this project. */
  webhooks?: WebhookConfig[]
  /** Replaces `tickets` for this project. */
  tickets?: TicketsConfig
}

/** The ticket tracker as the config file gives it (see `config/schema.ts`, docs/tickets.md). */
export interface TicketsConfig {
  tracker: 'github' | 'gitlab' | 'jira'
  github?: { repo: string; apiUrl?: string }
  gitlab?: { project: string; url?: string }
  jira?: { url: string; project: string; issueType?: string; deployment?: 'cloud' | 'server' }
  openOn?: ('flaky' | 'quarantined')[]
  labels?: string[]
  assignOwners?: boolean
  commentOnFailure?: boolean
  maxPerPass?: number
}

/** One webhook as the config file gives it (see `config/schema.ts`). */
export interface WebhookConfig {
  name: string
  url?: string
  urlEnv?: string
  secret?: string
  secretEnv?: string
  format?: 'json' | 'slack'
  events?: NotificationEvent[]
  suites?: string[]
}

/** What every setting is when nothing sets it. The README's configuration table is written from this. */
export const DEFAULTS = {
  db: '.flakewatch.db',
  suite: 'default',
  defaultBranch: 'main',
  successRate: { days: 3, passedStatuses: ['success', 'passed'] },
  quarantine: {
    auto: true,
    expiryDays: 30,
    maxQuarantined: 50,
    classes: ['flaky', 'chronic'] as ('intermittent' | 'flaky' | 'chronic')[],
    minScore: 0.6,
    minConfidence: 0.5,
    onProvenEvidence: true,
    onFlakyVerdict: true,
    releaseAfterPasses: 10,
    releaseClasses: ['stable', 'intermittent'] as ('stable' | 'intermittent' | 'flaky' | 'chronic')[],
    file: '.flakewatch/quarantine.json',
    owner: null as string | null,
  },
  codeowners: { file: null as string | null, dialect: 'auto' as 'auto' | 'github' | 'gitlab', enabled: true },
  /** Many repositories on one server: project key → store and tokens. Empty: one project, as before. */
  projects: {} as Record<string, ProjectConfig>,
  notifications: {
    webhooks: [] as WebhookConfig[],
    expiringWithinDays: 3,
    serverUrl: null as string | null,
    maxAttempts: 8,
    backoffSeconds: 5,
    timeoutSeconds: 10,
    intervalSeconds: 60,
  },
  /** No tracker: no tickets. */
  tickets: null as TicketsConfig | null,
  server: {
    host: '127.0.0.1',
    port: 8080,
    writeToken: null as string | null,
    /** Named write tokens, name → token: the name is the audit trail's actor. */
    writeTokens: {} as Record<string, string>,
    readToken: null as string | null,
    defaultProject: null as string | null,
    orgToken: null as string | null,
    bodyLimitMb: 50,
    /** Uploads accepted at once (receiving, waiting or being stored); one more is answered 503 with Retry-After. */
    uploadQueue: 16,
    /** Threads that parse and store uploads; null: 1 on SQLite (one writer at a time anyway), 2 on PostgreSQL. */
    uploadWorkers: null as number | null,
  },
}
