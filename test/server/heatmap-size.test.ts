import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { HeatmapResponse } from '../../src/server/api-types.js'
import { createApp } from '../../src/server/app.js'
import { resolveAnalysisConfig } from '../../src/analysis/index.js'
import { refreshAnalyses } from '../../src/pipeline/persisted-analyses.js'
import { HEATMAP_DEFAULT_BYTES } from '../../src/server/routes/heatmap.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { batch, result, runMeta } from '../helpers/builders.js'
import { config, tempDir } from './helpers.js'

describe('the default heatmap', () => {
  it('stays under its byte budget on a realistic store (2,000 tests × 100 runs) and pages the rest with offset', async () => {
    const tmp = tempDir()
    const store = await openSqliteStore(join(tmp.dir, 'h.db'))
    const app = await createApp({ store, config: config(), webRoot: null })
    try {
      // 2,000 tests with realistic, long names × 100 runs (the size): far more than 300 KB as one page.
      const names = Array.from({ length: 2000 }, (_, i) => `renders the checkout summary with discount code case ${i}`)
      for (let r = 0; r < 100; r++) {
        const run = runMeta(`r${r}`, new Date(Date.UTC(2026, 2, 1) + r * 3_600_000).toISOString(), {
          pipelineUrl: `https://ci.example.com/group/project/-/pipelines/${100000 + r}`,
        })
        await store.ingestReport(
          batch(
            run,
            names.map((n, i) => result(n, (i + r) % 37 ? 'passed' : 'failed')),
          ),
        )
      }
      // As `flakewatch ingest` does after its commits (the store's own writes leave the analyses stale): more tests
      // than a read re-analyses before answering.
      await refreshAnalyses(store, resolveAnalysisConfig())
      const whole = await app.inject({ method: 'GET', url: '/api/v1/heatmap?limit=2000' })
      expect(whole.rawPayload.length).toBeGreaterThan(HEATMAP_DEFAULT_BYTES)

      const first = await app.inject({ method: 'GET', url: '/api/v1/heatmap' })
      expect(first.rawPayload.length).toBeLessThanOrEqual(HEATMAP_DEFAULT_BYTES)
      const page = first.json<HeatmapResponse>()
      expect(page.total_tests).toBe(2000)
      expect(page.limit).toBe(page.tests.length)
      expect(page.tests.length).toBeGreaterThan(100)
      expect(page.tests.length).toBeLessThan(2000)
      expect(page.cells.every((c) => c.length === 100)).toBe(true)

      // Paging with offset yields every test once, each page under the budget.
      const seen = new Set(page.tests.map((t) => t.test_id))
      let offset = page.tests.length
      while (offset < page.total_tests) {
        const next = await app.inject({ method: 'GET', url: `/api/v1/heatmap?offset=${offset}` })
        expect(next.rawPayload.length).toBeLessThanOrEqual(HEATMAP_DEFAULT_BYTES)
        const body = next.json<HeatmapResponse>()
        for (const t of body.tests) seen.add(t.test_id)
        offset += body.tests.length
      }
      expect(seen.size).toBe(2000)
    } finally {
      await app.close()
      await store.close()
      tmp.cleanup()
    }
  }, 120_000)
})
