import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/run-cli.js'

/**
 * Every environment variable flakewatch reads is listed in docs/configuration.md, and every variable listed there
 * is read. "Read" is what the code says: `env.NAME`, `env?.NAME`, `env['NAME']`, and any `FLAKEWATCH_*` name
 * (some are read through tables).
 */

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.(ts|tsx)$/.test(e.name) ? [join(dir, e.name)] : [],
  )
}

function variablesRead(files: string[]): Set<string> {
  const names = new Set<string>()
  const read = /\benv(?:\?)?\.([A-Z][A-Z0-9_]*)\b|\benv\[['"]([A-Z][A-Z0-9_]*)['"]\]|\b(FLAKEWATCH_[A-Z0-9_]+)\b/g
  for (const f of files) for (const m of readFileSync(f, 'utf8').matchAll(read)) names.add(m[1] ?? m[2] ?? m[3]!)
  return names
}

function variablesDocumented(): Set<string> {
  const page = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8')
  const section = page.slice(page.indexOf('## Environment variables'), page.indexOf('## Checking a configuration'))
  return new Set([...section.matchAll(/`([A-Z][A-Z0-9_]{1,})`/g)].map((m) => m[1]!))
}

describe('environment variables', () => {
  const read = variablesRead(sources(join(ROOT, 'src')))
  const documented = variablesDocumented()

  it('finds what the code reads', () => {
    for (const name of ['FLAKEWATCH_DB', 'FLAKEWATCH_WRITE_TOKENS', 'GITHUB_SHA', 'CI', 'NO_COLOR'])
      expect(read).toContain(name)
    expect(read.size).toBeGreaterThan(80)
  })

  it('docs/configuration.md lists every variable the code reads', () => {
    expect([...read].filter((n) => !documented.has(n)).sort()).toEqual([])
  })

  it('docs/configuration.md lists no variable the code does not read', () => {
    expect([...documented].filter((n) => !read.has(n)).sort()).toEqual([])
  })
})
