import { Writable } from 'node:stream'
import { expect, test } from 'vitest'
import { heals, printHeals } from '../../src/cli/commands/heals.js'
import { createMemoryHealStore } from '../../src/heal/memory-store.js'
import type { HealRecord } from '../../src/store/store.js'

function sink(): { out: Writable; text: () => string } {
  const chunks: string[] = []
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString())
      done()
    },
  })
  return { out, text: () => chunks.join('') }
}

const heal = (over: Partial<HealRecord>): HealRecord => ({
  testId: 'e2e::checkout.spec.ts::pays',
  oldLocator: "locator('#pay')",
  newLocator: "getByTestId('pay')",
  score: 0.82,
  breakdown: { tag: 1, id: 0, text: 1 },
  url: 'http://127.0.0.1:3000/checkout',
  at: '2025-11-20T10:00:00.000Z',
  runId: 'run-1',
  ...over,
})

async function seeded() {
  const store = createMemoryHealStore()
  await store.appendHeal(heal({}))
  await store.appendHeal(heal({ testId: 'e2e::login.spec.ts::signs in', at: '2025-11-21T09:30:00.000Z', runId: null }))
  return store
}

test('heals lists the log newest first, optionally for one test', async () => {
  const store = await seeded()
  expect((await heals({ store })).map((h) => h.at)).toEqual(['2025-11-21T09:30:00.000Z', '2025-11-20T10:00:00.000Z'])
  expect(await heals({ store, testId: 'e2e::checkout.spec.ts::pays' })).toEqual([
    expect.objectContaining({ oldLocator: "locator('#pay')", runId: 'run-1' }),
  ])
})

test('printHeals --json writes the records with snake_case keys, as all JSON of the CLI', async () => {
  const list = await heals({ store: await seeded() })
  const { out, text } = sink()
  printHeals(list, { json: true }, out)
  const json = JSON.parse(text()) as Record<string, unknown>[]
  expect(json).toHaveLength(2)
  expect(json[1]).toEqual({
    id: 1,
    test_id: 'e2e::checkout.spec.ts::pays',
    old_locator: "locator('#pay')",
    new_locator: "getByTestId('pay')",
    score: 0.82,
    breakdown: { tag: 1, id: 0, text: 1 },
    url: 'http://127.0.0.1:3000/checkout',
    at: '2025-11-20T10:00:00.000Z',
    run_id: 'run-1',
  })
})

test('printHeals writes a table, then each heal with the locator to use instead', async () => {
  const { out, text } = sink()
  printHeals(await heals({ store: await seeded() }), {}, out)
  const lines = text().split('\n')
  expect(lines[0]).toMatch(/^at\s+score\s+test\s+broken locator$/)
  expect(text()).toContain(
    "  was:   locator('#pay')\n  use:   getByTestId('pay')\n  score: 0.82 (tag 1.00, id 0.00, text 1.00)",
  )
  expect(text()).toContain('  run:   run-1')
  expect(text()).toContain('2025-11-21 09:30:00Z')
})

test('printHeals says so when there is nothing to show', () => {
  const { out, text } = sink()
  printHeals([], {}, out)
  expect(text()).toBe('No heals recorded.\n')
})
