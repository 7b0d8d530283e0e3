import { describe, expect, it } from 'vitest'
import { analyzeHistories, resolveAnalysisConfig, toAnalysisJson } from '../src/analysis/index.js'
import { toWireJson, wireKey, wireText } from '../src/wire-json.js'
import { generateCausedSuite } from './analysis/generate-causes.js'

describe('wire casing', () => {
  it('turns camelCase keys into snake_case at any depth, and leaves every other key as it is', () => {
    expect(wireKey('expiresAt')).toBe('expires_at')
    expect(wireKey('pValue')).toBe('p_value')
    expect(wireKey('flip_rate')).toBe('flip_rate')
    expect(wireKey('unit::cart::addsItem')).toBe('unit::cart::addsItem')
    expect(wireKey('Content-Type')).toBe('Content-Type')
    expect(toWireJson({ testId: 'a', records: [{ createdAt: 1, issueUrl: null }], nested: { overCap: [] } })).toEqual({
      test_id: 'a',
      records: [{ created_at: 1, issue_url: null }],
      nested: { over_cap: [] },
    })
  })

  it('keeps the keys of the user’s own maps, and converts dates as JSON.stringify does', () => {
    const at = new Date(Date.UTC(2026, 0, 2))
    expect(toWireJson({ runEnv: 1, env: { nodeVersion: '22' }, facets: { gpuApi: 'vk' }, at })).toEqual({
      run_env: 1,
      env: { nodeVersion: '22' },
      facets: { gpuApi: 'vk' },
      at: '2026-01-02T00:00:00.000Z',
    })
  })

  it('gives back the same objects when nothing needs converting, so a second pass is free', () => {
    const already = { test_id: 'a', items: [{ x: 1 }], env: { aB: 1 } }
    expect(toWireJson(already)).toBe(already)
    const mixed = [{ a: 1 }, { bC: 2 }]
    const out = toWireJson(mixed) as unknown[]
    expect(out).not.toBe(mixed)
    expect(out[0]).toBe(mixed[0])
    expect(out).toEqual([{ a: 1 }, { b_c: 2 }])
    expect(wireText({ dryRun: true })).toBe('{"dry_run":true}')
  })
})

describe('the analysis JSON is already in wire casing', () => {
  // `analyze --json` prints toAnalysisJson's objects (and persisted rows of them) without converting their keys:
  // that is exact only while toWireJson would leave them as they are.
  it('toWireJson gives back every analysis of histories with every kind of hint, unchanged', async () => {
    const suite = generateCausedSuite({ seed: 5, filesPerCause: 2 })
    const analyses = await analyzeHistories(
      suite.tests.map((t) => t.history),
      resolveAnalysisConfig(),
      { now: suite.now },
    )
    const kinds = new Set(analyses.flatMap((a) => a.hints.map((h) => h.kind)))
    // The hints with nested objects and camelCase fields in the model, among others.
    for (const kind of ['order_dependency', 'burst', 'timeout', 'facet_association']) expect(kinds).toContain(kind)
    for (const a of analyses) {
      const json = { ...toAnalysisJson(a), owners: ['@org/team'] }
      expect(toWireJson(json)).toBe(json)
    }
  })
})
