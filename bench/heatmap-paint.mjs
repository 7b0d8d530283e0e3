// First paint of the dashboard's heatmap at 2,000 tests × 200 runs in Chromium (playwright-core driving
// /usr/bin/chromium), from navigation start to the `heatmap-painted` mark the page sets one frame after its first
// draw with data. Baseline in the same run: a page on the same server that draws an empty canvas and sets the same
// mark (what a browser costs before any data). Each load uses a fresh browser context (cold HTTP cache); the
// server's analysis cache is warm, as it is for every visitor but the first (the cold figure is reported apart).
// Run against the build: npx tsc -p tsconfig.build.json && npm run build:web && node bench/heatmap-paint.mjs
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { benchStore, percentiles } from './lib/server-data.mjs'

const TESTS = Number(process.env.BENCH_TESTS ?? 2000)
const RUNS = Number(process.env.BENCH_RUNS ?? 200)
const LOADS = Number(process.env.BENCH_LOADS ?? 9)
const root = join(import.meta.dirname, '..')
const dist = join(root, process.env.BENCH_DIST ?? 'dist')
const web = join(root, 'dist', 'web')
const log = (s) => process.stderr.write(`${s}\n`)
const emit = (row) => process.stdout.write(`${JSON.stringify({ bench: 'heatmap-paint', ...row })}\n`)

if (!existsSync(join(web, 'index.html'))) {
  const vite = join(root, 'node_modules/vite/bin/vite.js')
  const args = [vite, 'build', '--config', 'src/web/vite.config.ts', '--logLevel', 'warn']
  execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' })
}
const { createApp } = await import(join(dist, 'server/app.js'))
const { resolveConfig } = await import(join(dist, 'config/load.js'))
const { launchChromium } = await import('./lib/chromium.mjs')

log(`heatmap-paint: ${TESTS} tests × ${RUNS} runs`)
const { store, file } = await benchStore({ dist, name: 'heatmap-paint', tests: TESTS, runs: RUNS, log })
const app = await createApp({ store, db: file, config: { ...resolveConfig({}), file: null }, webRoot: web })

// The baseline page: same server, same headers (CSP included), a canvas and the same mark, no data.
const EMPTY_HTML = [
  '<!doctype html><meta charset="utf-8"><title>baseline</title>',
  '<body><canvas id="c" width="1400" height="700"></canvas>',
  '<script type="module" src="/__bench/empty.js"></script>',
].join('')
const EMPTY_JS = [
  "const c = document.getElementById('c').getContext('2d')",
  "c.fillStyle = '#fff'",
  'c.fillRect(0, 0, 1400, 700)',
  "requestAnimationFrame(() => performance.mark('heatmap-painted'))",
].join('\n')
app.get('/__bench/empty.html', (_q, reply) => reply.type('text/html').send(EMPTY_HTML))
app.get('/__bench/empty.js', (_q, reply) => reply.type('text/javascript').send(EMPTY_JS))
await app.listen({ host: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${app.server.address().port}`

let t = performance.now()
const warm = await fetch(`${base}/api/v1/heatmap?last=${RUNS}&limit=5000`)
const heat = await warm.json()
const coldMs = Math.round(performance.now() - t)
const coldMetric = 'cold analysis for the heatmap (first request) ms'
emit({ metric: coldMetric, value: coldMs, tests: heat.total_tests, runs: heat.runs.length })
if (heat.tests.length !== TESTS || heat.runs.length !== RUNS) {
  throw new Error(`expected ${TESTS} × ${RUNS}, got ${heat.tests.length} × ${heat.runs.length}`)
}

const browser = await launchChromium()

async function load(path) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } })
  const page = await context.newPage()
  await page.goto(`${base}${path}`)
  const painted = () => performance.getEntriesByName('heatmap-painted').length > 0
  await page.waitForFunction(painted, null, { timeout: 60_000 })
  const timing = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0]
    const api = performance.getEntriesByType('resource').find((r) => r.name.includes('/api/v1/heatmap'))
    return {
      painted: performance.getEntriesByName('heatmap-painted')[0].startTime,
      dcl: nav.domContentLoadedEventEnd,
      api: api ? api.responseEnd - api.startTime : null,
      apiBytes: api ? api.encodedBodySize : null,
      info: document.querySelector('.heat-info')?.textContent ?? null,
    }
  })
  await context.close()
  return timing
}

const heatmap = []
const baseline = []
let sample = null
await load('/__bench/empty.html')
await load(`/heatmap?last=${RUNS}`)
for (let i = 0; i < LOADS; i++) {
  baseline.push(await load('/__bench/empty.html'))
  const h = await load(`/heatmap?last=${RUNS}`)
  heatmap.push(h)
  sample = h
}
await browser.close()
await app.close()
await store.close()

const h = percentiles(heatmap.map((x) => x.painted))
const b = percentiles(baseline.map((x) => x.painted))
const api = percentiles(heatmap.map((x) => x.api))
log(`  shown: ${sample.info}; heatmap response ${sample.apiBytes} B`)
log(`  heatmap first paint: p50 ${h.p50} p95 ${h.p95} max ${h.max} ms`)
log(`  empty-canvas baseline: p50 ${b.p50} p95 ${b.p95} ms; heatmap API fetch in the page p50 ${api.p50} ms`)
const metric = `heatmap first paint (${TESTS} tests × ${RUNS} runs) p50 ms`
emit({ metric, value: h.p50, target: '≤ 1000', p95: h.p95, max: h.max, loads: h.n, shown: sample.info })
emit({ metric: 'empty-canvas baseline first paint p50 ms', value: b.p50, p95: b.p95, loads: b.n })
emit({ metric: 'heatmap / baseline first paint (p50 ratio)', value: Math.round((h.p50 / b.p50) * 10) / 10 })
emit({ metric: 'heatmap API fetch inside the page p50 ms', value: api.p50, bytes: sample.apiBytes })
