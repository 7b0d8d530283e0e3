// Benchmarks reuse generators that live in test/ as TypeScript; this compiles them into the bench's scratch folder
// so that a plain `node bench/<name>.mjs` can import them without a loader.
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')

/**
 * Empties (unless BENCH_KEEP is set) and creates bench/.tmp/<name>, compiles `sources` (paths from the repo root)
 * into its `gen` folder, and returns the folder and an `importHelper(path)` for a compiled source, e.g.
 * importHelper('test/analysis/generate.ts').
 */
export function compileTestHelpers(name, sources) {
  const dir = join(root, 'bench', '.tmp', name)
  if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const outDir = join(dir, 'gen')
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules/typescript/bin/tsc'),
      ...sources,
      '--outDir',
      outDir,
      '--rootDir',
      '.',
      '--module',
      'nodenext',
      '--target',
      'es2022',
      '--skipLibCheck',
    ],
    { cwd: root },
  )
  const importHelper = (source) => import(join(outDir, source.replace(/\.ts$/, '.js')))
  return { dir, importHelper }
}
