import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { resolveConfig, type ResolvedConfig } from '../../src/config/load.js'
import type { Result, RunMeta } from '../../src/model.js'
import { createApp, type AppDeps } from '../../src/server/app.js'
import type { HistoryFilter, Store } from '../../src/store/store.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, flakyResult, result, runMeta } from '../helpers/builders.js'

export const WRITE_TOKEN = 'write-token-0123456789'
export const READ_TOKEN = 'read-token-0123456789'
export const DAY = 86_400_000
/** The seeded history's first run; the analysis clock is set just after its last. */
export const START = Date.UTC(2026, 2, 1, 12)
export const RUNS = 14
export const NOW = START + RUNS * DAY

/** Names chosen to break naive HTML, URL and path handling. */
export const XSS_NAME = '<img src=x onerror=alert(1)><script>alert("xss")</script>'
export const ODD_NAME = 'odd / name ? with # and % and ::'

export function config(server: Partial<ResolvedConfig['server']> = {}): ResolvedConfig {
  const c = resolveConfig({})
  return { ...c, server: { ...c.server, writeToken: WRITE_TOKEN, ...server }, file: null }
}

/** Polls `check` every 20 ms until it holds; fails after `ms` (a cap on the wait, never an assertion on time). */
export async function until(check: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 20))
  }
}

export function tempDir(prefix = 'fw-server-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Fourteen daily runs of the `unit` suite: a stable test, a flaky one (alternating, with passes on retry), one
 * that broke five runs ago, one with an HTML payload for a name, one with URL-hostile characters, and one run
 * that was interrupted. Every run has a revision, pipeline and artifacts URL and an env facet.
 */
export async function seed(
  store: Pick<Store, 'ingestReport'>,
  opts: { suite?: string; prefix?: string } = {},
): Promise<RunMeta[]> {
  const suite = opts.suite ?? 'unit'
  const prefix = opts.prefix ?? 'r'
  const runs: RunMeta[] = []
  for (let i = 0; i < RUNS; i++) {
    const run = runMeta(`${prefix}${String(i).padStart(2, '0')}`, new Date(START + i * DAY).toISOString(), {
      suite,
      revision: `rev${String(i).padStart(2, '0')}abcdef`,
      pipelineId: String(1000 + i),
      pipelineUrl: `https://ci.example.com/p/${1000 + i}`,
      artifactsUrl: i === 3 ? 'javascript:alert(1)' : `https://ci.example.com/p/${1000 + i}/artifacts`,
      env: { os: i % 2 ? 'linux' : 'windows' },
      status: i === 6 ? 'interrupted' : 'complete',
    })
    const r = (name: string, status: Result['status']) => result(name, status, {}, suite)
    const results: Result[] = [
      r('stable', 'passed'),
      i % 3 === 0 ? flakyResult('flaky', suite) : r('flaky', i % 2 ? 'failed' : 'passed'),
      r('broken', i >= RUNS - 5 ? 'failed' : 'passed'),
      r(XSS_NAME, i % 4 === 1 ? 'failed' : 'passed'),
      r(ODD_NAME, 'passed'),
    ]
    if (i !== 6) results.push(r('late', 'passed'))
    await store.ingestReport(batch(run, results))
    runs.push(run)
  }
  return runs
}

export interface TestServer {
  app: FastifyInstance
  store: SqliteStore
  cleanup: () => Promise<void>
}

/** A seeded SQLite file and an app on it, with the analysis clock just after the seeded runs. */
export async function seededApp(
  deps: Partial<AppDeps> = {},
  seedOpts?: Parameters<typeof seed>[1],
): Promise<TestServer> {
  const tmp = tempDir()
  const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  await seed(store, seedOpts)
  const app = await createApp({ store, config: config(), now: () => NOW, webRoot: null, ...deps })
  return {
    app,
    store,
    cleanup: async () => {
      await app.close()
      await store.close()
      tmp.cleanup()
    },
  }
}

export const id = (name: string, suite = 'unit') => `${suite}::mod::${name}`
export const enc = encodeURIComponent
export const auth = (token = WRITE_TOKEN) => ({ authorization: `Bearer ${token}` })

/** The store, recording the filter of every history scan: a wrapper, every call reaches the real store. */
export function recordingScans(store: Store): { store: Store; filters: HistoryFilter[] } {
  const filters: HistoryFilter[] = []
  const wrapped = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown
      if (prop === 'scanHistory') {
        return (filter?: HistoryFilter) => {
          filters.push(filter ?? {})
          return target.scanHistory(filter)
        }
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  return { store: wrapped, filters }
}
