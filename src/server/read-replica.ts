import { formatLsn, type ReplayState } from '../store/postgres/replication.js'
import type { Store } from '../store/store.js'
import type { ReplicaHealth } from './api-types.js'

/** A primary: where writes land, and its WAL position after them. */
export type PrimaryStore = Store & { replication(): { walPosition(): Promise<bigint> } }
/** A streaming replica: how far it has replayed. */
export type ReplicaStore = Store & { replication(): { replayState(): Promise<ReplayState> } }

/** Where one request's reads go. */
export interface ReadChoice {
  from: 'replica' | 'primary'
  /** The replica's lag when it was chosen (ms); null when unknown or the primary was chosen. */
  lagMs: number | null
  /** The request presented a write position: it must see that write, so cached values are not used for it. */
  pinned: boolean
}

interface State {
  at: number
  replayed: bigint | null
  lagMs: number | null
  error: string | null
}

export interface ReadReplicaOptions {
  primary: PrimaryStore
  /** The replica's location, for `/healthz` (no password). */
  location: string
  /** Opens the replica's store; called again after a failed open. */
  open: () => Promise<ReplicaStore>
  /** How long a replay state is trusted before it is asked again (ms). Default 500. */
  refreshMs?: number
  clock?: () => number
}

/**
 * A streaming replica beside the primary: it knows how far the replica has replayed, and decides where each read
 * goes. A read goes to the replica unless the replica cannot be reached, or the read presents a write position
 * (its client's own upload) that the replica has not replayed yet: then to the primary. One query at a time asks
 * the replica where it stands, at most every `refreshMs` unless a read needs a newer answer.
 */
export class ReadReplica {
  private replica: ReplicaStore | null = null
  private state: State | null = null
  private asking: Promise<State> | null = null
  private readonly refreshMs: number
  private readonly clock: () => number
  private closed = false

  constructor(private readonly opts: ReadReplicaOptions) {
    this.refreshMs = opts.refreshMs ?? 500
    this.clock = opts.clock ?? Date.now
  }

  get location(): string {
    return this.opts.location
  }

  /** The replica's store, once it has been opened. */
  get store(): Store | null {
    return this.replica
  }

  /** The primary's WAL position now, after the caller's write has committed: what the write's answer carries. */
  async writtenPosition(): Promise<string> {
    return formatLsn(await this.opts.primary.replication().walPosition())
  }

  /** Where a read goes; `wanted` is the write position it presents, if any. */
  async choose(wanted: bigint | null): Promise<ReadChoice> {
    let state = await this.known()
    if (wanted !== null && !state.error && (state.replayed === null || state.replayed < wanted)) {
      state = await this.ask()
    }
    const pinned = wanted !== null
    if (state.error || (pinned && (state.replayed === null || state.replayed < wanted))) {
      return { from: 'primary', lagMs: null, pinned }
    }
    return { from: 'replica', lagMs: state.lagMs, pinned }
  }

  /** A read on the replica failed: whatever the cause, the next choice asks it again before trusting it. */
  failed(error: unknown): void {
    this.state = { at: this.clock(), replayed: null, lagMs: null, error: (error as Error).message }
  }

  /** A fresh look at the replica, and the primary's position to measure it against. */
  async health(): Promise<ReplicaHealth> {
    const state = await this.ask()
    if (state.error) {
      return {
        location: this.location,
        reachable: false,
        lag_ms: null,
        lag_bytes: null,
        replayed_lsn: null,
        error: state.error,
      }
    }
    // The primary's own health is the check's business: a failed look here only leaves the byte lag unknown.
    const written = await this.opts.primary
      .replication()
      .walPosition()
      .catch(() => null)
    const replayed = state.replayed
    return {
      location: this.location,
      reachable: true,
      lag_ms: state.lagMs,
      lag_bytes: replayed === null || written === null ? null : Number(written > replayed ? written - replayed : 0n),
      replayed_lsn: replayed === null ? null : formatLsn(replayed),
    }
  }

  async close(): Promise<void> {
    this.closed = true
    await this.asking?.catch(() => undefined)
    await this.replica?.close()
    this.replica = null
  }

  /** The last state, if recent; otherwise a fresh one (waited for only when there is none yet). */
  private async known(): Promise<State> {
    const state = this.state
    if (state && this.clock() - state.at < this.refreshMs) return state
    const asked = this.ask()
    // A stale state answers meanwhile (a replica known unreachable sends reads to the primary until a look finds
    // it back): a read never waits on the replica's health, except the very first.
    return state ?? asked
  }

  private ask(): Promise<State> {
    this.asking ??= this.measure().finally(() => (this.asking = null))
    return this.asking
  }

  private async measure(): Promise<State> {
    const at = this.clock()
    let state: State
    try {
      if (this.closed) throw new Error('the server is closing')
      this.replica ??= await this.opts.open()
      const replay = await this.replica.replication().replayState()
      state = replay.standby
        ? { at, replayed: replay.replayed, lagMs: replay.lagMs, error: null }
        : { at, replayed: null, lagMs: null, error: 'not a standby: pg_is_in_recovery() is false there' }
    } catch (error) {
      state = { at, replayed: null, lagMs: null, error: (error as Error).message }
    }
    this.state = state
    return state
  }
}
