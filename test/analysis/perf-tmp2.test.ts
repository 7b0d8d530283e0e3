import { test } from 'vitest'
import { normalizeMessage } from '../../src/analysis/index.js'
import { createRng } from './generate.js'

test('norm', () => {
  const r = createRng(1)
  const msgs: string[] = []
  for (let i = 0; i < 48000; i++) msgs.push([`Timeout of ${5000 + i}ms exceeded at /builds/app/src/login.test.ts:${i}:7`, `expected 'loading' to equal 'ready' (${new Date(1e12 + Math.floor(r() * 1e9)).toISOString()})`, `connect ECONNRESET 127.0.0.1:${30000 + i}`][i % 3]!)
  const t = performance.now()
  for (const m of msgs) normalizeMessage(m)
  console.log('norm ms', (performance.now() - t).toFixed(0))
})
