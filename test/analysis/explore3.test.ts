import { test } from 'vitest'
import type { HistoryEntry, RunInfo } from '../../src/model.js'
import { flakinessScore, resolveAnalysisConfig } from '../../src/analysis/index.js'
import { createRng } from './generate.js'

const H = 3_600_000
function run(i: number, env = { os: 'linux' }): RunInfo {
  return { runId: `r${i}`, suite: 'u', at: Date.UTC(2025, 0, 1) + i * 8 * H + ((i * 7919) % 60) * 60_000, branch: 'main', revision: `rev${i}`, pipelineId: null, jobStatus: null, pipelineStatus: null, runnerId: 'ci-1', env, status: 'complete', pipelineUrl: null, artifactsUrl: null }
}
function e(i: number, fail: boolean, extra: Partial<HistoryEntry> = {}, env?: { os: string }): HistoryEntry {
  return { run: run(i, env), status: fail ? 'failed' : 'passed', flakyOnRetry: false, durationMs: 100, attempts: 1, failedAttempts: fail ? 1 : 0, failedAttemptsMs: fail ? 100 : 0, errorType: fail ? 'AssertionError' : null, message: fail ? `expected 1 to equal 2 at /src/a.test.ts:${i % 5 + 10}:3` : null, healingOccurred: false, ...extra }
}
test('table', () => {
  const cfg = resolveAnalysisConfig().scoring
  const N = 50
  const rng = createRng(42)
  const patterns: Record<string, HistoryEntry[]> = {
    stablePass: Array.from({ length: N }, (_, i) => e(i, false)),
    stableFail: Array.from({ length: N }, (_, i) => e(i, true)),
    alternating: Array.from({ length: N }, (_, i) => e(i, i % 2 === 1)),
    retryPassing: Array.from({ length: N }, (_, i) => (i % 3 === 2 ? e(i, false) : e(i, false, { attempts: 2, failedAttempts: 1, flakyOnRetry: true, message: `Timeout of 5000ms exceeded` }))),
    timeout: Array.from({ length: N }, (_, i) => { const f = rng() < 0.3; return e(i, f, f ? { errorType: 'TimeoutError', message: `Timeout of ${5000 + Math.floor(rng() * 9) * 1000}ms exceeded waiting for ${['#login', '#submit', '.toast'][Math.floor(rng() * 3)]} at /src/e2e/${i}.spec.ts:${i}:5` } : {}) }),
    env: Array.from({ length: N }, (_, i) => { const win = i % 3 === 0; return e(i, win, {}, { os: win ? 'windows' : 'linux' }) }),
  }
  for (const [name, entries] of Object.entries(patterns)) {
    const s = flakinessScore(entries, cfg)
    console.log(name, s.score.toFixed(3), s.confidence.toFixed(3), JSON.stringify(Object.fromEntries(Object.entries(s.components).map(([k, v]) => [k, +v.toFixed(3)]))))
  }
})
