import { StoreError } from '../../errors.js'
import type { Store } from '../store.js'

/** Placeholder until the PostgreSQL backend lands; it fails loudly rather than pretending. */
export function openPostgresStore(_url: string): Promise<Store> {
  return Promise.reject(new StoreError('the PostgreSQL backend is not available in this build'))
}
