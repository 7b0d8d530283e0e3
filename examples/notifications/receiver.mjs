// A webhook receiver that checks flakewatch's signature and prints each event:
//   FLAKEWATCH_WEBHOOK_SECRET=… node examples/notifications/receiver.mjs
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'

const secret = process.env.FLAKEWATCH_WEBHOOK_SECRET ?? ''
const port = Number(process.env.PORT ?? 8787)
const seen = new Set()

createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8')
    const timestamp = String(req.headers['x-flakewatch-timestamp'] ?? '')
    const given = Buffer.from(String(req.headers['x-flakewatch-signature-256'] ?? ''))
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`)
    // Refuse a forged body, and one replayed more than 5 minutes later.
    const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) < 300
    if (given.length !== expected.length || !timingSafeEqual(given, expected) || !fresh) {
      res.writeHead(401).end()
      return
    }
    const event = JSON.parse(body)
    // Delivery is at least once: the same id may come twice.
    if (!seen.has(event.id)) console.log(`${event.event}: ${event.test.id}${event.url ? ` ${event.url}` : ''}`)
    seen.add(event.id)
    res.writeHead(204).end()
  })
}).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/`))
