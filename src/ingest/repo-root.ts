import { existsSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'

/**
 * The repository a command runs in: the nearest directory at or above `start` that holds `.git` (a directory, or
 * the file a worktree or submodule has), as `git rev-parse --show-toplevel` would say, without starting git.
 * @example findRepoRoot('/home/ana/shop/packages/cart') // '/home/ana/shop'
 */
export function findRepoRoot(start: string): string | null {
  let dir = resolve(start)
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir
    const up = dirname(dir)
    if (up === dir) return null
    dir = up
  }
}

/**
 * The root test paths are made relative to: `--root`, else the config's `root` (relative to the working
 * directory), else the git repository around the working directory, else the working directory itself (a
 * checkout without `.git`, such as a CI cache or a tarball: reports of the checkout then name its files as the
 * formats with relative paths do). Null only for the filesystem's root. The CI checkout roots apply too.
 */
export function resolveRepoRoot(
  flag: string | undefined,
  configured: string | null | undefined,
  cwd: string,
): string | null {
  if (flag) return resolve(cwd, flag)
  if (configured) return resolve(cwd, configured)
  const here = resolve(cwd)
  return findRepoRoot(here) ?? (dirname(here) === here ? null : here)
}

/**
 * An absolute path inside `root` made relative to it, with `/` separators, so that the same test file has one
 * name on every machine and in every report format. Other paths are returned unchanged.
 * @example relativeToRoot('/home/ana/shop/src/cart.test.ts', '/home/ana/shop') // 'src/cart.test.ts'
 */
export function relativeToRoot(path: string, root: string | null | undefined): string {
  if (!root || !isAbsolute(path)) return path
  const base = root.replace(/[/\\]+$/, '')
  const sep = path.charAt(base.length)
  if ((sep === '/' || sep === '\\') && path.startsWith(base) && path.length > base.length + 1) {
    return path.slice(base.length + 1).replace(/\\/g, '/')
  }
  return path
}
