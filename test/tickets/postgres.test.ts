import { afterAll, describe, expect, it } from 'vitest'
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js'
import { resolveTestPg, schemas } from '../store/pg-helpers.js'
import { fakeJira } from './fake-trackers.js'
import { look, seedFlaky, ticketConfig } from './helpers.js'

const pg = await resolveTestPg()

if (pg.skip !== undefined) {
  console.warn(`PostgreSQL tests skipped: ${pg.skip}`)
  describe.skip(`tickets on PostgreSQL (skipped: ${pg.skip})`, () => {
    it('opens one ticket per test from two processes', () => undefined)
  })
} else {
  const db = schemas(pg.url)
  afterAll(() => db.dropAll())

  describe('tickets on PostgreSQL', () => {
    it('two processes on one store (two servers) open one ticket per test, and close them once', async () => {
      const url = db.fresh()
      const a = await openPostgresStore(url)
      const b = await openPostgresStore(url)
      const fake = await fakeJira({ deployment: 'server', project: 'SHOP', token: 'pat' })
      try {
        await seedFlaky(a, 4)
        const config = ticketConfig({
          tracker: 'jira',
          jira: { url: fake.url, project: 'SHOP', deployment: 'server' },
          openOn: ['quarantined'],
          maxPerPass: 2,
        })
        const env = { FLAKEWATCH_JIRA_TOKEN: 'pat' }
        const at = new Date().toISOString()
        for (let t = 0; t < 4; t++) {
          const reason = 'flaky in CI'
          const testId = `unit::mod::flaky${t}`
          await a.putQuarantine(
            {
              testId,
              reason,
              owner: null,
              issueUrl: null,
              createdAt: at,
              createdBy: 'ana',
              expiresAt: null,
              source: 'manual',
            },
            { action: 'quarantine', actor: 'ana', at, reason, source: 'manual' },
          )
        }
        for (let round = 0; round < 3; round++) await Promise.all([look(a, config, env), look(b, config, env)])
        expect(fake.issues.map((i) => i.key).sort()).toEqual(['SHOP-1', 'SHOP-2', 'SHOP-3', 'SHOP-4'])
        expect(new Set(fake.issues.map((i) => i.title)).size).toBe(4)
        for (const q of await a.listQuarantines())
          expect(q.issueUrl).toMatch(new RegExp(`^${fake.url}/browse/SHOP-\\d$`))

        for (let t = 0; t < 4; t++) {
          await b.deleteQuarantine(`unit::mod::flaky${t}`, {
            action: 'release',
            actor: 'ana',
            at,
            reason: 'fixed',
            source: null,
          })
        }
        for (let round = 0; round < 3; round++) await Promise.all([look(a, config, env), look(b, config, env)])
        for (const i of fake.issues) expect(i.history).toEqual(['opened', 'closed'])
        expect(fake.violations).toEqual([])
      } finally {
        await fake.close()
        await a.close()
        await b.close()
      }
    }, 60_000)
  })
}
