import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { analysisOptions, resolveConfig, type ResolvedConfig } from '../../src/config/load.js'
import type { TicketsConfig } from '../../src/config/defaults.js'
import { analyzeStore } from '../../src/pipeline/analyze-store.js'
import type { Store } from '../../src/store/store.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { lookForTickets, type TicketLookOutcome } from '../../src/tickets/look.js'
import type { TrackerHttpOptions } from '../../src/tickets/trackers/http.js'
import { batch, history, result, runMeta } from '../helpers/builders.js'

export const START = Date.UTC(2026, 0, 1)
const DAY = 86_400_000

/** 20 daily runs: `flaky0`…`flaky{n-1}` fail every other run (half of them on odd runs, half on even ones: no run looks like an infrastructure failure), `steady` always passes. */
export async function seedFlaky(store: Store, n = 1, file: string | null = null): Promise<void> {
  const h = history(START)
  for (let i = 0; i < 20; i++) {
    h.run(`r${i}`).pass('steady')
    for (let t = 0; t < n; t++) {
      if ((i + t) % 2) h.fail(`flaky${t}`)
      else h.pass(`flaky${t}`)
    }
  }
  for (const b of h.build()) {
    for (const r of b.runs) for (const x of r.results) x.test.file = file
    await store.ingestReport(b)
  }
}

/** One more daily run after the seeded ones, where the named tests fail (or pass) with a fresh message. */
export async function addRun(store: Store, day: number, outcomes: Record<string, 'passed' | 'failed'>): Promise<void> {
  const run = runMeta(`late${day}`, new Date(START + day * DAY).toISOString(), {
    pipelineUrl: `https://ci.example/pipelines/${day}`,
  })
  const results = Object.entries(outcomes).map(([name, status]) =>
    result(name, status, status === 'failed' ? { message: `timeout after 5000ms on day ${day}` } : {}),
  )
  await store.ingestReport(batch(run, results))
}

export function ticketConfig(tickets: TicketsConfig): ResolvedConfig {
  return {
    ...resolveConfig({
      codeowners: { enabled: false },
      notifications: { serverUrl: 'https://flakewatch.example' },
      tickets,
    }),
    file: null,
  }
}

export async function tempStore(): Promise<{ file: string; store: Store }> {
  const dir = mkdtempSync(join(tmpdir(), 'fw-tickets-'))
  const file = join(dir, 'fw.db')
  return { file, store: await openSqliteStore(file) }
}

/** No waiting in tests: the retries' delays are recorded instead. */
export function noWait(slept: number[] = []): TrackerHttpOptions {
  return {
    backoffMs: 1,
    sleep: (ms) => {
      slept.push(ms)
      return Promise.resolve()
    },
  }
}

/** One look, as `flakewatch tickets sync` and `serve` make it: the whole store's analysis, then the tickets. */
export async function look(
  store: Store,
  config: ResolvedConfig,
  env: Record<string, string | undefined>,
  http: TrackerHttpOptions = noWait(),
  extra: { dryRun?: boolean; project?: string | null } = {},
): Promise<TicketLookOutcome> {
  const analyses = await analyzeStore(store, { config: analysisOptions(config) })
  return lookForTickets({
    store,
    config,
    analyses,
    env,
    project: extra.project ?? null,
    cwd: process.cwd(),
    http,
    dryRun: extra.dryRun,
  })
}
