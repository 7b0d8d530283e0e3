import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export { launchChromium } from '../../helpers/chromium.js'

export interface PageServer {
  /** Serves `html` at `path` from now on. */
  set(path: string, html: string): string
  url(path: string): string
  close(): Promise<void>
}

/** A loopback HTTP server on an ephemeral port that serves whatever HTML the test sets. */
export async function servePages(): Promise<PageServer> {
  const pages = new Map<string, string>()
  const server = createServer((req, res) => {
    const html = pages.get(new URL(req.url ?? '/', 'http://x').pathname)
    res.writeHead(html === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(html ?? 'not found')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const url = (path: string) => `http://127.0.0.1:${port}${path}`
  return {
    set(path, html) {
      pages.set(path, html)
      return url(path)
    },
    url,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  }
}
