import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Store } from '../../src/store/store.js'
import { history } from '../helpers/builders.js'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  /** The signature checked as a receiver would, from the raw body (null when no secret was given). */
  signatureValid: boolean | null
}

/**
 * A real HTTP webhook receiver on 127.0.0.1: answers each request with the next status of `script` (then 200),
 * and verifies the HMAC-SHA256 signature the way docs/notifications.md tells a receiver to.
 */
export async function startReceiver(secret: string | null = null) {
  const received: Received[] = []
  const script: { status: number; headers?: Record<string, string> }[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      let signatureValid: boolean | null = null
      if (secret) {
        const timestamp = String(req.headers['x-flakewatch-timestamp'] ?? '')
        const given = Buffer.from(String(req.headers['x-flakewatch-signature-256'] ?? ''))
        const expected = Buffer.from(
          `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`,
        )
        signatureValid = given.length === expected.length && timingSafeEqual(given, expected)
      }
      received.push({ headers: req.headers, body, signatureValid })
      const next = script.shift() ?? { status: 200 }
      res.writeHead(next.status, next.headers).end(next.status < 300 ? 'ok' : 'nope')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    /** The statuses the next requests get, in order. */
    respond(...statuses: (number | { status: number; headers?: Record<string, string> })[]) {
      script.push(...statuses.map((s) => (typeof s === 'number' ? { status: s } : s)))
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

/** 20 daily runs: `unit::mod::a` fails every other run (flaky), `unit::mod::b` always passes. */
export async function seedAlternating(store: Store): Promise<void> {
  const h = history()
  for (let i = 0; i < 20; i++) {
    h.run(`r${i}`).pass('b')
    if (i % 2) h.fail('a')
    else h.pass('a')
  }
  for (const b of h.build()) await store.ingestReport(b)
}

/** Quarantines one test as a person (or the policy) would, with its audit line. */
export function quarantineTest(
  store: Store,
  testId: string,
  reason: string,
  extra: { owner?: string; by?: string; source?: 'auto' | 'manual' } = {},
): Promise<void> {
  const at = new Date().toISOString()
  const by = extra.by ?? 'flakewatch'
  const source = extra.source ?? 'manual'
  return store.putQuarantine(
    {
      testId,
      reason,
      owner: extra.owner ?? null,
      issueUrl: null,
      createdAt: at,
      createdBy: by,
      expiresAt: null,
      source,
    },
    { action: 'quarantine', actor: by, at, reason, source },
  )
}
