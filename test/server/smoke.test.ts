import { it } from 'vitest'
import { seededApp, enc, id, XSS_NAME, ODD_NAME } from './helpers.js'

it('smoke', async () => {
  const s = await seededApp()
  for (const url of ['/healthz', '/api/v1/leaderboard?limit=3', '/api/v1/heatmap', '/api/v1/trends', '/api/v1/kiosk', '/api/v1/facets', '/api/v1/runs?limit=2',
    `/api/v1/tests/${enc(id(ODD_NAME))}`, `/api/v1/tests/${enc(id('flaky'))}/history?attempts=1&limit=3`, '/api/v1/nope', '/api/v1/leaderboard?last=abc']) {
    const r = await s.app.inject({ method: 'GET', url })
    console.log(url, r.statusCode, r.headers['content-security-policy'] ? 'csp' : 'NO CSP', r.body.slice(0, 600))
  }
  await s.cleanup()
})
