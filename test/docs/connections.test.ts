import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/run-cli.js'

/**
 * docs/server.md "Connections" has a row for every store `serve` opens (each one a PostgreSQL pool), naming the file
 * that opens it. A store opened in a new place, or one that goes away, changes the count per file and fails here:
 * the doc's connection arithmetic must follow it.
 */

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

/** Calls of `openStore(` and `openPostgresStore(` per file, outside comments and imports. */
function storesOpened(files: string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const f of files) {
    let n = 0
    for (const line of readFileSync(f, 'utf8').split('\n')) {
      if (/^\s*(\/\/|\*|\/\*|import\b)/.test(line)) continue
      n += [...line.matchAll(/\bopen(?:Postgres)?Store\(/g)].length
    }
    if (n) counts.set(relative(ROOT, f), n)
  }
  return counts
}

/** The rows of the section's table, by the file in its "opened in" column. */
function storesDocumented(): Map<string, number> {
  const page = readFileSync(join(ROOT, 'docs/server.md'), 'utf8')
  const section = page.slice(page.indexOf('#### Connections'), page.indexOf('### 3. Uploading from CI'))
  const counts = new Map<string, number>()
  for (const m of section.matchAll(/^\|[^|\n]*\| `(src\/[^`]+\.ts)` \|/gm))
    counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1)
  return counts
}

describe('docs/server.md counts the pools a server opens', () => {
  const opened = storesOpened([...sources(join(ROOT, 'src/server')), join(ROOT, 'src/cli/commands/serve.ts')])

  it('finds the stores the server opens', () => {
    expect(opened.get('src/cli/commands/serve.ts')).toBeGreaterThanOrEqual(3)
    expect(opened.get('src/server/upload-worker.ts')).toBe(1)
  })

  it('has one row per store opened, in the file that opens it', () => {
    expect(Object.fromEntries(storesDocumented())).toEqual(Object.fromEntries(opened))
  })
})
