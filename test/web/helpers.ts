import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { createApp, type AppDeps } from '../../src/server/app.js'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { config, NOW, seed, tempDir } from '../server/helpers.js'

export const ROOT = join(import.meta.dirname, '..', '..')
export const WEB_DIST = join(ROOT, 'dist', 'web')
export const ARTIFACTS = join(ROOT, 'test-artifacts')

function newest(path: string): number {
  const info = statSync(path)
  if (!info.isDirectory()) return info.mtimeMs
  let t = info.mtimeMs
  for (const e of readdirSync(path)) t = Math.max(t, newest(join(path, e)))
  return t
}

/**
 * Builds the dashboard when `dist/web` is missing or older than its sources (src/web and the shared API types).
 * A lock directory keeps two test workers from building at once.
 */
export function ensureWebBuilt(): void {
  const index = join(WEB_DIST, 'index.html')
  const sources = Math.max(newest(join(ROOT, 'src', 'web')), newest(join(ROOT, 'src', 'server', 'api-types.ts')))
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return
  const lock = join(ROOT, 'test', '.tmp', 'web-build.lock')
  mkdirSync(join(ROOT, 'test', '.tmp'), { recursive: true })
  const deadline = Date.now() + 120_000
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch {
      if (Date.now() > deadline) rmSync(lock, { recursive: true, force: true })
      execFileSync('sleep', ['0.5'])
    }
  }
  try {
    if (existsSync(index) && statSync(index).mtimeMs >= sources) return
    const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js')
    const args = [vite, 'build', '--config', 'src/web/vite.config.ts', '--logLevel', 'warn']
    execFileSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' })
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

export { launchChromium } from '../helpers/chromium.js'

export interface LiveServer {
  url: string
  app: FastifyInstance
  store: SqliteStore
  close: () => Promise<void>
}

/** A seeded SQLite file served by a real listening server on 127.0.0.1, with the built dashboard. */
export async function startSeededServer(deps: Partial<AppDeps> = {}): Promise<LiveServer> {
  const tmp = tempDir('fw-web-')
  const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  await seed(store)
  await seed(store, { suite: 'e2e', prefix: 'e' })
  const app = await createApp({ store, config: config(), now: () => NOW, webRoot: WEB_DIST, ...deps })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    store,
    close: async () => {
      await app.close()
      await store.close()
      tmp.cleanup()
    },
  }
}

/** Saves a screenshot under test-artifacts/ (gitignored) and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true })
  const path = join(ARTIFACTS, `${name}.png`)
  await page.screenshot({ path, fullPage: false })
  return path
}

export interface WatchedTab {
  page: Page
  /** Page errors and console errors (a 401 before a token is given is the expected way in, and is left out). */
  errors: string[]
  /** Messages of dialogs (alert, confirm), each dismissed. */
  dialogs: string[]
}

/** A fresh tab in a context of its own (its own sessionStorage: no token yet) that records errors and dialogs. */
export async function watchedTab(browser: Browser, contexts: BrowserContext[]): Promise<WatchedTab> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } })
  contexts.push(context)
  const page = await context.newPage()
  const errors: string[] = []
  const dialogs: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('401')) errors.push(m.text())
  })
  page.on('dialog', (d) => {
    dialogs.push(d.message())
    void d.dismiss()
  })
  return { page, errors, dialogs }
}
