import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'

describe('flakewatch demo', { timeout: 120_000 }, () => {
  const base = testdir({}, 'demo-')
  afterAll(() => cleanup(base))

  it('--no-serve: stores the example reports per suite, prints the leaderboard and where the project is', async () => {
    const res = await runCli(['demo', '--dir', 'shop', '--no-serve'], { cwd: base })
    expect(res.exitCode, res.stderr).toBe(0)
    const shop = join(base, 'shop')
    expect(res.stderr).toMatch(/stored 312 results of 19 example reports/)
    // The leaderboard, most harmful first: the flaky payment test, then the broken price formatter.
    const rows = res.stdout.split('\n').filter((l) => l.includes('::'))
    expect(rows[0]).toMatch(/^unit::shop\.checkout\.PaymentGatewayTest::charges a card .* flaky /)
    expect(rows[1]).toMatch(/^unit::shop\.catalog\.PriceFormatterTest::formats prices in EUR .* broken /)
    expect(rows).toHaveLength(15)
    expect(res.stdout).not.toMatch(/^http:/m)
    expect(res.stderr).toContain(`The example project is in ${shop}`)
    // The project the docs run in: its config, its Vitest tests, the example data the pages name.
    for (const f of ['flakewatch.config.json', 'vitest.config.mjs', 'src/cart.test.ts', '.flakewatch.db'])
      expect(existsSync(join(shop, f)), f).toBe(true)
    const data = readdirSync(join(ROOT, 'examples')).filter((n) => n !== 'project')
    expect(data).toContain('reports')
    expect(readdirSync(join(shop, 'examples')).sort()).toEqual(data.sort())
    const suites = await runCli(['analyze', '--json'], { cwd: shop })
    const ids = (JSON.parse(suites.stdout) as { test_id: string }[]).map((a) => a.test_id.split('::')[0])
    expect(new Set(ids)).toEqual(new Set(['unit', 'e2e', 'api']))
  })

  it('refuses a folder that is not empty, naming it, and writes nothing there', async () => {
    const busy = testdir({ 'notes.txt': 'mine\n' }, 'demo-busy-')
    const res = await runCli(['demo', '--dir', busy, '--no-serve'])
    expect(res.exitCode).toBe(2)
    expect(res.stderr).toContain(`${busy}: not empty`)
    expect(readdirSync(busy)).toEqual(['notes.txt'])
    cleanup(busy)
  })
})
