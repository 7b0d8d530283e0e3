// Small helpers of the PostgreSQL benches (pg-partitions.mjs, pg-scale.mjs): a client of its own for one piece of
// work, and timing.
import pg from 'pg'

/** Runs `fn` with a fresh client of `url` (with `search_path` set to `schema` when given), closed afterwards. */
export async function withClient(url, fn, schema) {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    if (schema) await c.query(`SET search_path = ${schema}`)
    return await fn(c)
  } finally {
    await c.end()
  }
}

/** `fn`'s value and how long it took, in ms. */
export async function timed(fn) {
  const t0 = performance.now()
  const value = await fn()
  return { ms: performance.now() - t0, value }
}
