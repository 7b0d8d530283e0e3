import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { DEFAULTS } from '../../src/config/defaults.js'
import { analysisOptions, loadConfig, resolveConfig } from '../../src/config/load.js'
import { ConfigSchema } from '../../src/config/schema.js'
import { ConfigError } from '../../src/errors.js'
import { resolveAnalysisConfig } from '../../src/analysis/resolve-analysis-config.js'

describe('config', () => {
  it('fills defaults', () => {
    const c = resolveConfig({})
    expect(c.quarantine).toEqual(DEFAULTS.quarantine)
    expect(c.server.port).toBe(8080)
    expect(c.defaultBranch).toBe('main')
  })

  it('names the key in errors', () => {
    expect(() => resolveConfig({ quarantine: { expiryDays: 0 } }, 'fw.json')).toThrow(
      /fw\.json: quarantine\.expiryDays/,
    )
    expect(() => resolveConfig({ quarantin: {} })).toThrow(ConfigError)
    expect(() => resolveConfig({ analysis: { scoring: { weights: { intermittency: -1 } } } })).toThrow(
      /analysis\.scoring\.weights\.intermittency/,
    )
  })

  it('applies precedence: env over file over defaults, and resolves paths against the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fw-cfg-'))
    writeFileSync(
      join(dir, 'flakewatch.config.json'),
      JSON.stringify({ db: 'data/fw.db', suite: 'file-suite', quarantine: { maxQuarantined: 5 } }),
    )
    const fromFile = loadConfig({ cwd: dir, env: {} })
    expect(fromFile.db).toBe(join(dir, 'data/fw.db'))
    expect(fromFile.suite).toBe('file-suite')
    expect(fromFile.quarantine.maxQuarantined).toBe(5)
    const fromEnv = loadConfig({ cwd: dir, env: { FLAKEWATCH_DB: 'postgres://x/y', FLAKEWATCH_SUITE: 'env-suite' } })
    expect(fromEnv.db).toBe('postgres://x/y')
    expect(fromEnv.suite).toBe('env-suite')
    expect(() => loadConfig({ cwd: dir, file: 'missing.json', env: {} })).toThrow(/not found/)
    writeFileSync(join(dir, 'bad.json'), '{')
    expect(() => loadConfig({ cwd: dir, file: 'bad.json', env: {} })).toThrow(/bad\.json: invalid JSON/)
  })

  it('passes analysis options through to the engine', () => {
    const c = resolveConfig({
      defaultBranch: 'trunk',
      analysis: { scoring: { weights: { intermittency: 0.5 } }, flipRate: { window: 12 } },
    })
    const resolved = resolveAnalysisConfig(analysisOptions(c))
    expect(resolved.scoring.weights.intermittency).toBe(0.5)
    expect(resolved.scoring.weights.rerunPassRate).toBe(0.25)
    expect(resolved.flipRate.window).toBe(12)
    expect(resolved.successRate.defaultBranch).toBe('trunk')
  })

  it('accepts removed keys with a warning naming each key and what replaced it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fw-cfg-'))
    const file = join(dir, 'flakewatch.config.json')
    writeFileSync(
      file,
      JSON.stringify({
        analysis: {
          verdict: { fixedMaxRuns: 40, fixedBaselineRuns: 100, fixedAlpha: 0.02 },
          hints: { timeOfDayBucketHours: 6, alpha: 0.05 },
        },
      }),
    )
    const c = loadConfig({ cwd: dir, env: {} })
    expect(c.warnings).toHaveLength(3)
    expect(c.warnings[0]).toMatch(/flakewatch\.config\.json: analysis\.verdict\.fixedMaxRuns is no longer used.*fixedAlpha/)
    expect(c.warnings[1]).toMatch(/analysis\.verdict\.fixedBaselineRuns is no longer used.*fixedRateConfidence/)
    expect(c.warnings[2]).toMatch(/analysis\.hints\.timeOfDayBucketHours is no longer used.*any start hour and width/)
    // The keys are gone before the analysis sees them; the keys beside them still apply.
    expect(c.analysis.verdict).toEqual({ fixedAlpha: 0.02 })
    expect(c.analysis.hints).toEqual({ alpha: 0.05 })
    const resolved = resolveAnalysisConfig(analysisOptions(c))
    expect(resolved.verdict.fixedAlpha).toBe(0.02)
    expect(resolved.verdict).not.toHaveProperty('fixedMaxRuns')
    expect(resolved.hints).not.toHaveProperty('timeOfDayBucketHours')
    // No warning without them, and an unknown key is still refused.
    expect(resolveConfig({ analysis: { verdict: { fixedAlpha: 0.02 } } }).warnings).toEqual([])
    expect(() => resolveConfig({ analysis: { verdict: { fixedMaxRunz: 40 } } })).toThrow(/fixedMaxRunz/)
  })

  it('marks the removed keys deprecated in the JSON Schema', () => {
    const schema = z.toJSONSchema(ConfigSchema, { io: 'input' }) as unknown as {
      properties: { analysis: { properties: Record<string, { properties: Record<string, { deprecated?: boolean }> }> } }
    }
    const a = schema.properties.analysis.properties
    expect(a.verdict!.properties.fixedMaxRuns!.deprecated).toBe(true)
    expect(a.verdict!.properties.fixedBaselineRuns!.deprecated).toBe(true)
    expect(a.hints!.properties.timeOfDayBucketHours!.deprecated).toBe(true)
    expect(a.verdict!.properties.fixedAlpha!.deprecated).toBeUndefined()
  })

  it('ships a JSON Schema generated from the zod schema', async () => {
    const generated = `${JSON.stringify(z.toJSONSchema(ConfigSchema, { io: 'input' }), null, 2)}\n`
    await expect(generated).toMatchFileSnapshot('../../schema/flakewatch.config.schema.json')
  })
})
