import { readFileSync } from 'node:fs'
import type { z } from 'zod'
import { ConfigError, InputError } from '../errors.js'
import { resolveAnalysisConfig } from '../analysis/resolve-analysis-config.js'
import { analysisOptions, type ResolvedConfig } from './load.js'
import { ConfigSchema } from './schema.js'

/**
 * A candidate detection and quarantine policy: the `analysis`, `quarantine` and `successRate` sections of
 * `flakewatch.config.json`, in the same shape and checked by the same schema. Keys it leaves out keep the
 * current config's values.
 */
export const PolicyCandidateSchema = ConfigSchema.pick({
  $schema: true,
  analysis: true,
  quarantine: true,
  successRate: true,
}).strict()

export type PolicyCandidate = z.output<typeof PolicyCandidateSchema>

/** The largest candidate file read: a policy is a few dozen settings. */
export const MAX_POLICY_BYTES = 64 * 1024

/** The config sections a policy is made of. */
export type PolicyConfig = Pick<ResolvedConfig, 'analysis' | 'quarantine' | 'successRate' | 'defaultBranch'>

/**
 * A candidate from parsed JSON; errors name the key, as the config's do (`quarantine.minScore: …`).
 * @example parsePolicyCandidate({ quarantine: { minScore: 0.4 } }, 'candidate.json')
 */
export function parsePolicyCandidate(raw: unknown, source: string): PolicyCandidate {
  const parsed = PolicyCandidateSchema.safeParse(raw)
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${source}: ${i.path.join('.') || '(root)'}: ${i.message}`))
  }
  return parsed.data
}

/** Reads `--policy <file>`: JSON, at most {@link MAX_POLICY_BYTES}. */
export function readPolicyCandidate(file: string): PolicyCandidate {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new InputError(`${file}: cannot read the policy file: ${(error as Error).message}`)
  }
  if (Buffer.byteLength(text) > MAX_POLICY_BYTES) {
    throw new InputError(`${file}: a policy file is at most ${MAX_POLICY_BYTES} bytes`)
  }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    throw new InputError(`${file}: not JSON: ${(error as Error).message}`)
  }
  return parsePolicyCandidate(raw, file)
}

const isPlain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Objects merged key by key, anything else (numbers, arrays) replaced. */
function merge<T>(base: T, over: unknown): T {
  if (!isPlain(base) || !isPlain(over)) return (over === undefined ? base : over) as T
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(over)) if (v !== undefined) out[k] = merge(base[k], v)
  return out as T
}

/**
 * The config as it would be under the candidate: each setting the candidate gives replaces the current one.
 * @example applyPolicyCandidate(config, { quarantine: { minScore: 0.4 } }).quarantine.minScore // 0.4
 */
export function applyPolicyCandidate<C extends PolicyConfig>(config: C, candidate: PolicyCandidate): C {
  return {
    ...config,
    analysis: merge(config.analysis, candidate.analysis),
    quarantine: merge(config.quarantine, candidate.quarantine),
    successRate: merge(config.successRate, candidate.successRate),
  }
}

/** The sections of the config's `analysis` (schema.ts), as the engine's resolved config names them too. */
const ANALYSIS_SECTIONS = ['flipRate', 'scoring', 'verdict', 'infra', 'hints'] as const

/**
 * The config's `analysis` sections as the engine applies them, its defaults filled in. Only these sections: the
 * engine's resolved config also carries the quarantine criteria and success-rate settings, which have their own
 * keys.
 */
export function effectiveAnalysis(config: PolicyConfig): Record<string, unknown> {
  const resolved = resolveAnalysisConfig(analysisOptions(config)) as unknown as Record<string, unknown>
  return Object.fromEntries(ANALYSIS_SECTIONS.map((k) => [k, resolved[k]]))
}

/** One setting the candidate changes, by its config key. */
export interface ChangedSetting {
  key: string
  current: unknown
  candidate: unknown
}

/** Quarantine settings that are not policy: where the file is, who owns quarantines by default. */
const NOT_POLICY = new Set(['quarantine.file', 'quarantine.owner'])

/** Every policy setting of a config, by dotted key, with its effective value. */
export function policySettings(config: PolicyConfig): { key: string; value: unknown }[] {
  const out: { key: string; value: unknown }[] = []
  const walk = (prefix: string, v: unknown) => {
    if (isPlain(v)) for (const [k, x] of Object.entries(v)) walk(`${prefix}.${k}`, x)
    else if (!NOT_POLICY.has(prefix)) out.push({ key: prefix, value: v ?? null })
  }
  walk('analysis', effectiveAnalysis(config))
  walk('quarantine', config.quarantine)
  walk('successRate', config.successRate)
  return out
}

/**
 * The settings whose value differs between two configs, by dotted key (`quarantine.minScore`), each with its
 * effective value: an analysis setting neither config names has the analysis engine's default.
 */
export function changedSettings(current: PolicyConfig, candidate: PolicyConfig): ChangedSetting[] {
  const out: ChangedSetting[] = []
  const walk = (prefix: string, a: unknown, b: unknown) => {
    if (isPlain(a) || isPlain(b)) {
      const ao = isPlain(a) ? a : {}
      const bo = isPlain(b) ? b : {}
      for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) walk(`${prefix}.${k}`, ao[k], bo[k])
      return
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ key: prefix, current: a ?? null, candidate: b ?? null })
  }
  // Only the sections the config's `analysis` has: the resolved engine config also carries the quarantine
  // criteria and success-rate settings, which are walked under their own keys.
  walk('analysis', effectiveAnalysis(current), effectiveAnalysis(candidate))
  walk('quarantine', current.quarantine, candidate.quarantine)
  walk('successRate', current.successRate, candidate.successRate)
  return out
}
