import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { InputError } from '../../errors.js'
import { ingestFiles } from '../../pipeline/ingest-files.js'
import { openStore } from '../../store/open.js'
import type { Io } from '../output.js'
import { analyzeAndPrint } from './analyze.js'
import { serve, type ServeHooks, type ServeResult } from './serve.js'

export interface DemoOptions {
  /** Where the example project goes: a new or empty folder (default: a new temporary one). */
  dir?: string
  /** `--no-serve` sets it to false: print the leaderboard and stop (for CI). */
  serve?: boolean
  host?: string
  port?: string
}

/** The package's examples, beside dist/ in the package as in the repository. */
const EXAMPLES = fileURLToPath(new URL('../../../examples/', import.meta.url))

/**
 * The example project as the docs describe it (docs/README.md): a small Vitest project with its config, and the
 * shop's example reports under `examples/`. Every example of the docs runs as written in this folder.
 */
export function writeExampleProject(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new InputError(`${dir}: not empty; the demo writes its example project into a new or empty folder`)
  }
  mkdirSync(dir, { recursive: true })
  cpSync(join(EXAMPLES, 'project'), dir, { recursive: true })
  // The rest of examples/ (reports, configs, …) goes under examples/, where the docs name it.
  for (const name of readdirSync(EXAMPLES)) {
    if (name !== 'project') cpSync(join(EXAMPLES, name), join(dir, 'examples', name), { recursive: true })
  }
}

/**
 * `flakewatch demo`: no clone, no set-up. The example project in a folder of its own, the shop's two weeks of
 * nightly reports in its store, the leaderboard, then the dashboard over them (unless `serve` is false).
 */
export async function demo(
  opts: DemoOptions,
  io: Io,
  hooks: ServeHooks = {},
): Promise<{ dir: string; stoppedBy?: ServeResult['stoppedBy'] }> {
  const dir = opts.dir ? resolve(opts.dir) : mkdtempSync(join(tmpdir(), 'flakewatch-demo-'))
  writeExampleProject(dir)
  const db = join(dir, '.flakewatch.db')
  const config = join(dir, 'flakewatch.config.json')
  const store = await openStore({ db, env: {} })
  try {
    // Each report's suite is in its name (2026-11-21-e2e.json): the suite is part of every test id, and the
    // dashboard's by-suite views need more than one.
    const reports = join(dir, 'examples', 'reports')
    const bySuite = new Map<string, string[]>()
    for (const file of readdirSync(reports).sort()) {
      const suite = /^\d{4}-\d\d-\d\d-([a-z0-9]+)\./.exec(file)?.[1] ?? 'default'
      bySuite.set(suite, [...(bySuite.get(suite) ?? []), join(reports, file)])
    }
    let results = 0
    let stored = 0
    for (const [suite, inputs] of bySuite) {
      const { ingested } = await ingestFiles({ store, inputs, context: { suite } })
      for (const e of ingested) results += e.results
      stored += ingested.length
    }
    io.stderr.write(
      `flakewatch demo: stored ${results} results of ${stored} example reports ` +
        `(a shop's nightly runs over two weeks) in ${db}\n\n`,
    )
  } finally {
    await store.close()
  }
  await analyzeAndPrint({ db, config, limit: '15' }, io)
  io.stderr.write(
    `\nThe example project is in ${dir}: the README's quick start and the examples of docs/ ` +
      `run there as written (cd ${dir}).\n`,
  )
  if (opts.serve === false) return { dir }
  const { stoppedBy } = await serve({ db, config, host: opts.host, port: opts.port }, io, hooks)
  return { dir, stoppedBy }
}
