import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import { HttpError } from './http-error.js'

/** The dashboard's client-side routes: each serves index.html and the app draws the page. */
export const SPA_ROUTES = [
  '/',
  '/heatmap',
  '/trends',
  '/impact',
  '/quarantine',
  '/kiosk',
  '/overview',
  '/settings',
  '/tests/*',
]

/**
 * Where the built dashboard is: `dist/web` beside the compiled server, or the repository's `dist/web` when the
 * server runs from source. Never `src/web`: that is the unbuilt source.
 */
export function findWebRoot(): string | null {
  for (const rel of ['../web/', '../../dist/web/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url))
    if (/[\\/]dist[\\/]web[\\/]?$/.test(dir) && existsSync(`${dir}index.html`)) return dir
  }
  return null
}

/**
 * Serves the built dashboard. Only files that exist at startup get a route (no wildcard), so no request path
 * can reach outside the folder; dotfiles are never served. Hashed assets are cached for good, index.html never.
 */
export async function dashboardRoutes(app: FastifyInstance, root: string | null): Promise<void> {
  if (!root) {
    for (const route of SPA_ROUTES) {
      app.get(route, () => {
        throw new HttpError(503, {
          code: 'FW_NO_DASHBOARD',
          message: 'the dashboard is not built: run `npm run build:web` (the API under /api/v1 works without it)',
        })
      })
    }
    return
  }
  await app.register(fastifyStatic, {
    root: resolve(root),
    prefix: '/',
    wildcard: false,
    index: false,
    dotfiles: 'deny',
    serveDotFiles: false,
    redirect: false,
    list: false,
    cacheControl: false,
    setHeaders: (reply, path) => {
      const hashed = /[\\/]assets[\\/]/.test(path)
      void reply.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache')
    },
  })
  for (const route of SPA_ROUTES) {
    app.get(route, (_request, reply) => reply.header('cache-control', 'no-cache').sendFile('index.html'))
  }
}
