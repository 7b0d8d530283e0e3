import { WRITTEN_RUNS_MAX, type Store, type WrittenRun } from '../store/store.js'
import { selectionKey, type Selection } from './selection.js'
import { applyDelta, deltaBaseOf, type Snapshot } from './snapshot.js'
import type { SnapshotBuilder } from './snapshot-builder.js'

export interface SnapshotCacheOptions {
  /** The store, for the cheap change probe. */
  store: Store
  builder: SnapshotBuilder
  /** Ends the analysis windows; without it they end at the newest selected run. */
  now?: () => number
  /** How long small values (quarantines, facets) are kept before they are read again. Default 5 s. */
  ttlMs?: number
  /**
   * How often, at most, the store is probed for other instances' writes. Default 1 s, or `ttlMs` if less: a probe
   * is one indexed query for the runs written in the last half-minute, and an upload through another instance
   * shows here a probe after its 201 (plus the incremental update).
   */
  probeMs?: number
  /**
   * A snapshot older than this is rebuilt in the background even if no probe saw a change. Default 60 s; never
   * sooner than {@link REBUILD_AGE_PER_BUILD_MS} times its last full build took.
   */
  maxAgeMs?: number
  /** Selections kept. Default 8. */
  maxEntries?: number
  /** The clock for `ttlMs`, `probeMs` and `maxAgeMs` (not the analysis clock). Default `Date.now`. */
  clock?: () => number
  onError?: (error: unknown) => void
  /**
   * True while serving a read that must see a given write (a client reading its own upload through a replica):
   * small values are then computed afresh for it, never taken from the cache, which another read may have filled
   * from a replica that had not replayed the write yet.
   */
  fresh?: () => boolean
}

/**
 * The periodic rebuild waits at least this many times as long as the last full build took, so that rebuilds for
 * age take at most a twentieth of the builder's time. At 10M results a build takes 20-60 s: a rebuild every minute
 * would keep a core busy for windows measured in days, which move by minutes in between.
 */
export const REBUILD_AGE_PER_BUILD_MS = 20

/** Small values kept (see `value`): some keys come from requests (a test's audit), so the oldest go first. */
export const MAX_VALUES = 256

/**
 * How far before the latest write it has seen each probe looks again. A write is stamped just before its commit,
 * so one that commits late can carry an older stamp than a write already seen; runs seen with the same stamp
 * before are left out, so looking again costs a query, not a re-analysis.
 */
export const WRITE_MARGIN_MS = 30_000

interface Built {
  snapshot: Snapshot
  /** When its last full scan finished, by the cache's clock: incremental updates keep it. */
  fullAt: number
  /** How long that full build took, by the cache's clock. */
  buildMs: number
  /** The cache's write counter when the build started (or the update was applied). */
  writes: number
  /** The cache's full-rebuild generation when its last full scan started. */
  generation: number
}

interface Entry {
  selection: Selection
  value?: Built
  pending?: { writes: number; promise: Promise<Snapshot> }
  /** Runs written (by anyone) since `value` was made, not yet applied to it. */
  dirty?: Set<string>
  /** An incremental update waiting its turn: runs written meanwhile join it. */
  queued?: Promise<Snapshot>
}

/**
 * Analysis snapshots per run selection, so that the read endpoints answer from memory instead of scanning a
 * million results per request.
 *
 * - A write through this process (`applyWrite(runIds)`) is applied incrementally: only the tests those runs
 *   touch are re-analysed, from their own history read by index, at the snapshot's analysis clock (see
 *   `snapshotDelta`). Readers keep the current snapshot until the update is in; the writer can await it.
 * - The analysis windows move with time (and with the newest run) only at a full rebuild: in the background once
 *   a snapshot's full scan is `maxAgeMs` old, never on every write.
 * - Other instances' writes are found by a cheap probe of the store at most every `probeMs`: the runs written
 *   since the latest write it had seen (`runsWrittenSince`, minus {@link WRITE_MARGIN_MS}). Those it had not
 *   seen are applied like this process's own writes, incrementally, in the background while the old snapshot
 *   keeps answering. Only a probe that finds more runs than it may read rebuilds in full.
 * - Builds and updates run one at a time, in a worker thread when the store allows it (else in this thread,
 *   yielding to the event loop between slices), so that they never stall other requests.
 *
 * No other state changes answers, so any number of stateless instances can serve one store.
 */
export class SnapshotCache {
  private readonly entries = new Map<string, Entry>()
  /** Writes applied or being applied, this process's and others': a snapshot made before the last is stale. */
  private writes = 0
  /** This process's own writes, so that a probe can tell whether it started after them. */
  private ownWrites = 0
  /** `ownWrites` when the latest finished probe started: the probe saw every own write up to it. */
  private probedOwn = -1
  /** Moves when a probe cannot tell which runs changed: every snapshot is then rebuilt in full. */
  private generation = 0
  /** What the last probe read: each run written since the margin, with its stamp. Null before the first probe. */
  private seen: Map<string, number> | null = null
  /** The latest stamp any probe read. */
  private latest = 0
  /** Probes look no further back than this: a full rebuild already covers what was written before. */
  private floor = 0
  private probedAt = 0
  private probing: Promise<void> | null = null
  private queue: Promise<unknown> = Promise.resolve()
  private readonly values = new Map<string, { writes: number; at: number; promise: Promise<unknown> }>()
  private readonly ttlMs: number
  private readonly probeMs: number
  private readonly maxAgeMs: number
  private readonly maxEntries: number
  private readonly now: (() => number) | undefined
  private readonly clock: () => number

  constructor(private readonly opts: SnapshotCacheOptions) {
    this.ttlMs = opts.ttlMs ?? 5000
    this.probeMs = opts.probeMs ?? Math.min(1000, this.ttlMs)
    this.maxAgeMs = opts.maxAgeMs ?? 60_000
    this.maxEntries = opts.maxEntries ?? 8
    this.now = opts.now
    this.clock = opts.clock ?? Date.now
  }

  /** Something changed that no incremental update covers: the next read waits for a full build. */
  invalidate(): void {
    this.writes++
    this.ownWrites++
    for (const entry of this.entries.values()) {
      entry.value = undefined
      entry.dirty = undefined
    }
  }

  /**
   * Runs were written through this process: every snapshot is updated for them, incrementally. Resolves once
   * every snapshot known now has them, so that the writer's next read sees its write; failures only log, since the
   * write itself is done (the next full rebuild repairs the snapshot).
   */
  applyWrite(runIds: string[]): Promise<void> {
    this.ownWrites++
    return this.written(runIds)
  }

  /** Marks the runs to apply on every snapshot that exists or is being built, and queues their updates. */
  private written(runIds: string[]): Promise<void> {
    this.writes++
    const updates: Promise<unknown>[] = []
    for (const [key, entry] of this.entries) {
      if (!entry.value && !entry.pending) continue
      entry.dirty ??= new Set()
      for (const id of runIds) entry.dirty.add(id)
      updates.push(this.update(key, entry).catch((e) => this.opts.onError?.(e)))
    }
    return Promise.all(updates).then(() => undefined)
  }

  /** The snapshot of a selection, fresh for this process's writes and at most a probe behind other instances'. */
  get(selection: Selection): Promise<Snapshot> {
    const key = selectionKey(selection)
    let entry = this.entries.get(key)
    if (entry) {
      this.entries.delete(key)
      this.entries.set(key, entry)
    } else {
      entry = { selection }
      this.entries.set(key, entry)
      this.evict()
    }
    const value = entry.value
    if (value && value.writes === this.writes) {
      this.revalidate(key, entry, value)
      return Promise.resolve(value.snapshot)
    }
    if (value) {
      // A write is being applied: answer from the snapshot before it rather than wait.
      if (!entry.queued) this.update(key, entry).catch((e) => this.opts.onError?.(e))
      return Promise.resolve(value.snapshot)
    }
    return this.build(key, entry)
  }

  /**
   * A small derived value (the facet lists) cached like a snapshot: dropped on this process's writes, recomputed
   * after `ttlMs`.
   */
  value<T>(key: string, compute: () => Promise<T>): Promise<T> {
    if (this.opts.fresh?.()) return compute()
    const hit = this.values.get(key)
    if (hit && hit.writes === this.writes && this.clock() - hit.at < this.ttlMs) return hit.promise as Promise<T>
    const promise = compute()
    promise.catch(() => this.values.delete(key))
    this.values.delete(key)
    this.values.set(key, { writes: this.writes, at: this.clock(), promise })
    if (this.values.size > MAX_VALUES) this.values.delete(this.values.keys().next().value!)
    return promise
  }

  /** This process changed something the small values hold but no snapshot does (a quarantine). */
  dropValues(): void {
    this.values.clear()
  }

  /** Snapshots already built, newest use last; for answers that may use whatever is known (run counts). */
  cached(): Snapshot[] {
    return [...this.entries.values()].flatMap((e) => (e.value ? [e.value.snapshot] : []))
  }

  private revalidate(key: string, entry: Entry, value: Built): void {
    if (this.clock() - this.probedAt >= this.probeMs) this.probe().catch((e) => this.opts.onError?.(e))
    const changed = value.generation !== this.generation
    const old = this.clock() - value.fullAt >= Math.max(this.maxAgeMs, REBUILD_AGE_PER_BUILD_MS * value.buildMs)
    if ((changed || old) && !entry.pending) this.build(key, entry).catch((e) => this.opts.onError?.(e))
  }

  /**
   * Reads the runs written since the latest write seen (less the margin) and applies those not seen before, in
   * the background. One probe at a time; a caller during one shares it.
   */
  private probe(): Promise<void> {
    if (!this.probing) {
      this.probedAt = this.clock()
      const own = this.ownWrites
      // The first probe reads the latest writes, whenever they were: a snapshot built after it has all of them.
      const since = this.seen === null ? 0 : Math.max(this.latest - WRITE_MARGIN_MS, this.floor)
      this.probing = this.opts.store
        .runsWrittenSince(since, WRITTEN_RUNS_MAX)
        .then((rows) => {
          this.notice(rows)
          this.probedOwn = Math.max(this.probedOwn, own)
        })
        .finally(() => (this.probing = null))
    }
    return this.probing
  }

  /**
   * A probe that started after every write of this process so far, so that it knows them and never takes them
   * for another instance's. A few tries: writes may keep arriving while it runs, and a later probe catches those.
   */
  private async probeAfterOwnWrites(): Promise<void> {
    for (let i = 0; i < 3 && this.probedOwn < this.ownWrites; i++) await this.probe()
  }

  private notice(rows: WrittenRun[]): void {
    const before = this.seen
    this.seen = new Map()
    const changed: string[] = []
    for (const { runId, writtenAt } of rows) {
      this.seen.set(runId, writtenAt)
      if (writtenAt > this.latest) this.latest = writtenAt
      if (before !== null && before.get(runId) !== writtenAt) changed.push(runId)
    }
    if (before === null) return
    if (rows.length >= WRITTEN_RUNS_MAX) {
      // So many writes within the margin that some may be unseen: rebuild in full, answering meanwhile. The
      // rebuilds scan after this probe, so the next probes start from here, or they would find as many again.
      this.generation++
      this.floor = this.latest
      return
    }
    // Our own writes are among them when this probe saw them before the update that applies them did: marking
    // them again joins that update.
    if (changed.length) this.written(changed).catch((e) => this.opts.onError?.(e))
  }

  private build(key: string, entry: Entry): Promise<Snapshot> {
    const writes = this.writes
    if (entry.pending && entry.pending.writes === writes) return entry.pending.promise
    const pending = {
      writes,
      promise: this.serial(async () => {
        await this.probeAfterOwnWrites()
        const generation = this.generation
        // Written before the scan starts: the build has them.
        const covered = entry.dirty
        entry.dirty = undefined
        const started = this.clock()
        let snapshot: Snapshot
        try {
          snapshot = await this.opts.builder.build(entry.selection, this.now?.())
        } catch (error) {
          if (covered) for (const id of covered) (entry.dirty ??= new Set()).add(id)
          throw error
        }
        const fullAt = this.clock()
        return { snapshot, writes, generation, fullAt, buildMs: fullAt - started }
      }).then(
        (built) => {
          if (!entry.value || entry.value.writes <= built.writes) entry.value = built
          if (entry.pending === pending) entry.pending = undefined
          return built.snapshot
        },
        (error: unknown) => {
          if (entry.pending === pending) entry.pending = undefined
          throw error
        },
      ),
    }
    entry.pending = pending
    return pending.promise
  }

  /**
   * Applies the entry's written runs to its snapshot, after whatever build or update is running: a delta computed
   * where builds run, merged here. A delta that would not be exact or cheap becomes a full build.
   */
  private update(key: string, entry: Entry): Promise<Snapshot> {
    if (entry.queued) return entry.queued
    const queued = this.serial(async () => {
      const current = entry.value
      if (current && !entry.dirty?.size) {
        // A build since has what was marked: only the snapshot's write counter moves.
        entry.queued = undefined
        entry.value = { ...current, writes: this.writes }
        return current.snapshot
      }
      // Probed first: our own runs become known (never applied again as another instance's), and other
      // instances' runs found meanwhile join this update.
      await this.probeAfterOwnWrites()
      entry.queued = undefined
      const runs = [...(entry.dirty ?? [])]
      entry.dirty = undefined
      const writes = this.writes
      const generation = this.generation
      const value = entry.value
      // A delta that fails (reported) is built in full instead, as one too large would be.
      const delta =
        value && runs.length
          ? await this.opts.builder.delta(entry.selection, deltaBaseOf(value.snapshot), runs).catch((e: unknown) => {
              this.opts.onError?.(e)
              return null
            })
          : null
      let built: Built
      if (value && (delta || runs.length === 0)) {
        const snapshot = delta ? applyDelta(value.snapshot, delta) : value.snapshot
        built = { ...value, snapshot, writes }
      } else {
        const started = this.clock()
        const snapshot = await this.opts.builder.build(entry.selection, this.now?.())
        const fullAt = this.clock()
        built = { snapshot, writes, generation, fullAt, buildMs: fullAt - started }
      }
      if (!entry.value || entry.value.writes <= writes) entry.value = built
      return built.snapshot
    })
    entry.queued = queued
    queued.catch(() => {
      if (entry.queued === queued) entry.queued = undefined
    })
    return queued
  }

  /** One build at a time: each is a full scan, and two at once would only share the same two cores. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn)
    this.queue = run.catch(() => undefined)
    return run
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries) return
      if (!entry.pending) this.entries.delete(key)
    }
  }
}

export function createSnapshotCache(opts: SnapshotCacheOptions): SnapshotCache {
  return new SnapshotCache(opts)
}
