import type { Fingerprint, HealFilter, HealRecord } from '../store/store.js'
import type { HealStore } from './healer.js'

/**
 * A heal store that lives in memory: the default when no real store is wired in, and the store of the tests.
 * Learned fingerprints last as long as the process.
 * @example const store = createMemoryHealStore(); await createHealer({ store }).learn(...)
 */
export function createMemoryHealStore(): HealStore {
  const fingerprints = new Map<string, Fingerprint>()
  const heals: HealRecord[] = []
  const key = (testId: string, locator: string) => JSON.stringify([testId, locator])
  return {
    putFingerprint(fp) {
      fingerprints.set(key(fp.testId, fp.locator), structuredClone(fp))
      return Promise.resolve()
    },
    getFingerprint(testId, locator) {
      const fp = fingerprints.get(key(testId, locator))
      return Promise.resolve(fp ? structuredClone(fp) : null)
    },
    appendHeal(heal) {
      heals.push(structuredClone({ ...heal, id: heals.length + 1 }))
      return Promise.resolve()
    },
    listHeals(filter: HealFilter = {}) {
      let out = heals.filter(
        (h) => (!filter.testId || h.testId === filter.testId) && (!filter.since || h.at >= filter.since),
      )
      // Newest first, as the Store contract says; ids break ties between heals of the same millisecond.
      out = out.sort((a, b) => (a.at === b.at ? (b.id ?? 0) - (a.id ?? 0) : a.at < b.at ? 1 : -1))
      if (filter.limit !== undefined) out = out.slice(0, filter.limit)
      return Promise.resolve(out.map((h) => structuredClone(h)))
    },
  }
}
