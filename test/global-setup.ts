import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')

function newest(dir: string): number {
  let t = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs)
  }
  return t
}

/**
 * End-to-end tests spawn the built CLI and real runners load the built reporters, so `dist/` must match `src/`.
 * `npm test` builds first; this only rebuilds when someone runs vitest directly after editing sources.
 */
export default function setup(): void {
  const bin = join(root, 'dist', 'cli', 'main.js')
  const stale = !existsSync(bin) || newest(join(root, 'src')) > statSync(bin).mtimeMs
  if (stale) {
    try {
      execFileSync(
        process.execPath,
        [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
        { cwd: root, stdio: 'inherit' },
      )
    } catch {
      // tsc still emits on type errors; `npm test` reports them in its typecheck step, so the tests can run.
    }
    execFileSync(process.execPath, [join(root, 'scripts', 'post-build.mjs')], { cwd: root })
  }
}
