import { it } from 'vitest'
import { createApp } from '../../src/server/app.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { config } from './helpers.js'
it('p', async () => {
  const store = await openSqliteStore(':memory:')
  const app = await createApp({ store, config: config(), webRoot: '/work/main/dist/web/', logger: { level: 'debug' } })
  for (const url of ['/tests/..%2f..%2fsecret.txt', '/tests/a%2fb', '/tests/..%2fx']) {
    const r = await app.inject({ method: 'GET', url })
    console.log(url, r.statusCode, r.body.slice(0, 200))
  }
})
