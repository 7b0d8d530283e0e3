import { existsSync, readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { InputError } from '../errors.js'
import type { TestRef } from '../model.js'
import {
  CODEOWNERS_MAX_BYTES,
  ownersOf,
  parseCodeowners,
  type Codeowners,
  type CodeownersDialect,
} from './codeowners.js'

/** Where GitHub and GitLab look for the file, in their order (GitHub's first three, then GitLab's own folder). */
export const CODEOWNERS_LOCATIONS = ['.github/CODEOWNERS', 'CODEOWNERS', 'docs/CODEOWNERS', '.gitlab/CODEOWNERS']

export interface ReadCodeownersOptions {
  /** The repository root the test paths are relative to. */
  root: string
  /** An explicit file (relative to `root`); it must exist. */
  file?: string | null
  dialect?: CodeownersDialect | 'auto'
}

/** GitLab's folder, or GitLab-only syntax (a section header or an exclusion), means GitLab. */
export function detectDialect(file: string, text: string): CodeownersDialect {
  if (/(^|[\\/])\.gitlab[\\/]/.test(file)) return 'gitlab'
  if (/(^|[\\/])\.github[\\/]/.test(file)) return 'github'
  return /^\s*(\^?\[[^\]]+\]|!)/m.test(text) ? 'gitlab' : 'github'
}

/**
 * Finds and parses the repository's CODEOWNERS. Returns null when there is none (owners are then empty).
 * @example const co = readCodeowners({ root: process.cwd() })
 */
export function readCodeowners(opts: ReadCodeownersOptions): Codeowners | null {
  const file = opts.file
    ? resolve(opts.root, opts.file)
    : CODEOWNERS_LOCATIONS.map((f) => resolve(opts.root, f)).find((f) => existsSync(f))
  if (!file) return null
  if (!existsSync(file)) throw new InputError(`${file}: CODEOWNERS file not found`)
  const size = statSync(file).size
  if (size >= CODEOWNERS_MAX_BYTES)
    throw new InputError(`${file}: CODEOWNERS is ${size} bytes; the limit is ${CODEOWNERS_MAX_BYTES}`)
  const text = readFileSync(file, 'utf8')
  const dialect = !opts.dialect || opts.dialect === 'auto' ? detectDialect(file, text) : opts.dialect
  return parseCodeowners(text, dialect, file)
}

/** The path a test's owners are looked up by: its file, else its module when that looks like a path. */
export function testPath(test: Pick<TestRef, 'file' | 'module'>): string | null {
  if (test.file) return test.file
  return /[\\/]|\.[cm]?[jt]sx?$|\.py$|\.rb$|\.go$|\.java$/.test(test.module) ? test.module : null
}

export type OwnerLookup = (test: Pick<TestRef, 'file' | 'module'>) => string[]

/**
 * A cached lookup of tests' code owners; without a CODEOWNERS file every test has none.
 * @example const ownersOfTest = ownerLookup(readCodeowners({ root: '.' })); ownersOfTest(test) // ['@team-web']
 */
export function ownerLookup(codeowners: Codeowners | null): OwnerLookup {
  const cache = new Map<string, string[]>()
  return (test) => {
    const path = codeowners ? testPath(test) : null
    if (!codeowners || !path) return []
    const norm = path.replace(/\\/g, '/')
    let owners = cache.get(norm)
    if (!owners) cache.set(norm, (owners = ownersOf(codeowners, norm)))
    return owners
  }
}

/**
 * The owner lookup a command uses: CODEOWNERS from the config's `codeowners` section, searched in the config
 * file's folder (the repository root, usually), else in `cwd`. A broken file warns once and gives no owners.
 */
export function ownerLookupFromConfig(
  config: {
    codeowners: { file: string | null; dialect: CodeownersDialect | 'auto'; enabled: boolean }
    file: string | null
  },
  cwd: string,
  warn: (message: string) => void = () => {},
): OwnerLookup {
  if (!config.codeowners.enabled) return ownerLookup(null)
  const root = config.file ? resolve(config.file, '..') : cwd
  try {
    const co = readCodeowners({ root, file: config.codeowners.file, dialect: config.codeowners.dialect })
    for (const w of co?.warnings ?? []) warn(w)
    return ownerLookup(co)
  } catch (error) {
    if (config.codeowners.file) throw error
    warn(`CODEOWNERS ignored: ${(error as Error).message}`)
    return ownerLookup(null)
  }
}
