import type { ResolvedAnalysisConfig } from '../analysis/index.js'
import type { ResolvedConfig } from '../config/load.js'
import type { QuarantineManager } from '../quarantine/manager.js'
import type { Store } from '../store/store.js'
import type { OwnerLookup } from '../owners/read-codeowners.js'
import type { AuthTokens } from './auth.js'
import type { NotifierStatus } from './notifier.js'
import type { ReadReplica } from './read-replica.js'
import type { PersistedReads } from './persisted-reads.js'
import type { SnapshotCache } from './snapshot-cache.js'
import type { UploadPool } from './upload-pool.js'

/** What every route module needs, built once by `createApp`. */
export interface ServerContext {
  /** The store routes read and write through: with a replica, its reads go where the request's choice says. */
  store: Store
  /** The store for long scans (the bundle): a second connection when the caller opened one. */
  scanStore: Store
  /** The store's location (file or URL), for workers that open connections of their own; none for `:memory:`. */
  db: string | undefined
  config: ResolvedConfig
  analysis: ResolvedAnalysisConfig
  tokens: AuthTokens
  cache: SnapshotCache
  /** Reads answered from the persisted analyses (the default selection's leaderboard, kiosk, heatmap, trends). */
  reads: PersistedReads
  quarantine: QuarantineManager
  now: () => number
  /** Runs older than this many days have probably lost their CI artifacts. */
  artifactExpiryDays: number
  /** Largest upload, in bytes. */
  bodyLimit: number
  /** Where uploads wait and are stored, off the HTTP thread. */
  uploads: UploadPool
  /** Tests' code owners, from the CODEOWNERS the config points at. */
  owners: OwnerLookup
  /** The notifier's looks so far, when this app runs one (`AppDeps.notify`). */
  notifier: (() => NotifierStatus) | null
  /** The project key on a multi-project server; null on a single-project one. */
  project: string | null
  /** The read replica, when reads go to one (`serve --read-db`). */
  replica: ReadReplica | null
}
