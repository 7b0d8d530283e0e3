import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findRepoRoot, relativeToRoot, resolveRepoRoot } from '../../src/ingest/repo-root.js'
import { testdir } from '../helpers/run-cli.js'

describe('repository root', () => {
  it('is the nearest folder with .git, a directory or a worktree’s file', () => {
    const dir = testdir({ 'repo/.git/HEAD': 'ref: refs/heads/main\n', 'repo/packages/cart/src/a.test.ts': '' })
    expect(findRepoRoot(join(dir, 'repo', 'packages', 'cart', 'src'))).toBe(join(dir, 'repo'))
    const wt = join(dir, 'repo', 'packages', 'wt')
    mkdirSync(wt, { recursive: true })
    writeFileSync(join(wt, '.git'), 'gitdir: /elsewhere\n')
    expect(findRepoRoot(wt)).toBe(wt)
  })

  it('prefers --root, then the config, then git', () => {
    const dir = testdir({ 'repo/.git/HEAD': '' })
    const cwd = join(dir, 'repo')
    expect(resolveRepoRoot('sub', 'ignored', cwd)).toBe(join(cwd, 'sub'))
    expect(resolveRepoRoot(undefined, '..', cwd)).toBe(dir)
    expect(resolveRepoRoot(undefined, null, cwd)).toBe(cwd)
  })

  it('is the working directory outside any repository, never the filesystem root', () => {
    // The checkout of a CI cache or a tarball has no .git: its reports still name its files relatively.
    const outside = mkdtempSync(join(tmpdir(), 'fw-no-git-'))
    try {
      expect(findRepoRoot(outside)).toBeNull()
      expect(resolveRepoRoot(undefined, null, outside)).toBe(outside)
      expect(resolveRepoRoot(undefined, null, '/')).toBeNull()
    } finally {
      rmSync(outside, { recursive: true, force: true })
    }
  })

  it('makes only paths inside the root relative', () => {
    expect(relativeToRoot('/home/ana/shop/src/cart.test.ts', '/home/ana/shop')).toBe('src/cart.test.ts')
    expect(relativeToRoot('/home/ana/shop/src/cart.test.ts', '/home/ana/shop/')).toBe('src/cart.test.ts')
    // A sibling whose name starts like the root is not inside it.
    expect(relativeToRoot('/home/ana/shop2/src/a.ts', '/home/ana/shop')).toBe('/home/ana/shop2/src/a.ts')
    expect(relativeToRoot('/home/ana/shop', '/home/ana/shop')).toBe('/home/ana/shop')
    expect(relativeToRoot('src/a.ts', '/home/ana/shop')).toBe('src/a.ts')
    expect(relativeToRoot('/x/a.ts', null)).toBe('/x/a.ts')
  })
})
