#!/usr/bin/env node
// Writes the example reports of the README demo to examples/reports/: a fictional web shop's nightly CI over
// two weeks. Deterministic: the same --end date gives byte-identical files.
//
//   node scripts/make-examples.mjs                 # nights ending 2026-11-21 (what is committed)
//   node scripts/make-examples.mjs --end today     # nights ending last night, for a demo run later on
//   node scripts/make-examples.mjs --out /tmp/x    # somewhere else
//
// The story, so that the demo has something to find:
// - 14 nightly unit/integration runs as JUnit XML (Surefire style), 21 tests, with the run context in
//   <properties> (ci.branch, ci.revision, ci.pipeline_id, ci.pipeline_url, ci.job_id, ci.runner, env.os);
// - PaymentGatewayTest "charges a card" is flaky: it fails about one night in three (failing its rerun too) and
//   on two more nights passes only on retry (<flakyFailure>), on revisions that also saw it pass;
// - PriceFormatterTest "formats prices in EUR" broke with the revision of the 4th-last night and has failed
//   every night since, reruns included;
// - the last 3 nights also ran 4 browser tests (Playwright JSON, project chromium) and the last 2 an API
//   contract job (CTRF), all passing.
// Revisions change on weekdays only: a weekend night runs Friday's revision again.

import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const DEFAULT_END = '2026-11-21'
const NIGHTS = 14
const DAY = 86_400_000

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback
}

const endArg = option('end', DEFAULT_END)
const end = endArg === 'today' ? new Date(Date.now() - DAY).toISOString().slice(0, 10) : endArg
if (!/^\d{4}-\d\d-\d\d$/.test(end)) throw new Error(`--end wants YYYY-MM-DD or "today", not ${endArg}`)
const outDir = option('out', join(ROOT, 'examples', 'reports'))

// mulberry32: a tiny seeded PRNG, so durations look organic but never change.
function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = prng(20260308)

const xml = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c])
const cdata = (s) => `<![CDATA[${String(s).replaceAll(']]>', ']]]]><![CDATA[>')}]]>`
const seconds = (ms) => (ms / 1000).toFixed(3)
const hex = (n, len) => {
  let h = ''
  for (let i = 0; i < len; i++) h += ((n >>> ((i * 4) % 28)) ^ Math.floor(random() * 16)).toString(16).slice(-1)
  return h
}

// ---------------------------------------------------------------------------------------------------------------
// The nights: dates, revisions, pipeline ids, runners.

const nights = []
let revision = null
for (let i = 0; i < NIGHTS; i++) {
  const day = new Date(Date.parse(`${end}T00:00:00Z`) - (NIGHTS - 1 - i) * DAY)
  const weekday = day.getUTCDay()
  const weekend = weekday === 0 || weekday === 6
  if (!weekend || revision === null) revision = hex(i * 7919 + 17, 40)
  nights.push({
    index: i,
    date: day.toISOString().slice(0, 10),
    start: day.getTime() + 2 * 3600_000 + Math.floor(random() * 600_000),
    revision,
    pipelineId: 48210 + i * 3,
    jobId: 913400 + i * 11,
    runner: `shop-runner-${1 + (i % 3)}`,
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Unit and integration tests (JUnit XML).

const UNIT = {
  'shop.cart.CartTest': [
    'adds an item',
    'removes an item',
    'merges the guest cart on login',
    'applies a percentage coupon',
  ],
  'shop.cart.CartTotalsTest': ['computes VAT per line', 'rounds totals to cents'],
  'shop.catalog.PriceFormatterTest': ['formats prices in EUR', 'formats prices in USD'],
  'shop.catalog.SearchTest': ['finds products by name', 'ranks exact matches first', 'handles an empty query'],
  'shop.checkout.CheckoutServiceTest': ['creates an order from a cart', 'rejects an empty cart', 'reserves stock'],
  'shop.checkout.PaymentGatewayTest': ['charges a card', 'refunds a payment', 'declines an expired card'],
  'shop.auth.SessionTest': [
    'logs in with valid credentials',
    'locks the account after 5 failures',
    'expires idle sessions',
  ],
  'shop.api.HealthTest': ['reports healthy'],
}
const FLAKY = ['shop.checkout.PaymentGatewayTest', 'charges a card']
const BROKEN = ['shop.catalog.PriceFormatterTest', 'formats prices in EUR']
// One letter per night: p = pass, f = fail (rerun fails too), r = pass on retry.
const FLAKY_PATTERN = 'ppfprpfppfrpfp'
const BROKEN_FROM = NIGHTS - 4

const baseMs = new Map()
for (const [cls, names] of Object.entries(UNIT)) for (const n of names) baseMs.set(`${cls}#${n}`, 3 + random() * 120)
baseMs.set(FLAKY.join('#'), 850)

const stack = (type, message, frames) => [`${type}: ${message}`, ...frames.map((f) => `\tat ${f}`)].join('\n')
const flakyFailure = {
  type: 'shop.payments.GatewayTimeoutException',
  message: 'payment gateway did not answer within 2000 ms',
  stack: stack('shop.payments.GatewayTimeoutException', 'payment gateway did not answer within 2000 ms', [
    'shop.payments.HttpGateway.charge(HttpGateway.java:88)',
    'shop.checkout.PaymentGatewayTest.chargesACard(PaymentGatewayTest.java:41)',
  ]),
}
const brokenFailure = {
  type: 'org.opentest4j.AssertionFailedError',
  message: 'expected: <12,50 €> but was: <€12.50>',
  stack: stack('org.opentest4j.AssertionFailedError', 'expected: <12,50 €> but was: <€12.50>', [
    'org.junit.jupiter.api.AssertionUtils.fail(AssertionUtils.java:55)',
    'shop.catalog.PriceFormatterTest.formatsPricesInEur(PriceFormatterTest.java:23)',
  ]),
}

function outcome(night, cls, name) {
  if (cls === FLAKY[0] && name === FLAKY[1]) return FLAKY_PATTERN[night.index]
  if (cls === BROKEN[0] && name === BROKEN[1] && night.index >= BROKEN_FROM) return 'f'
  return 'p'
}

function unitReport(night) {
  let clock = night.start
  let failures = 0
  let total = 0
  const suites = []
  for (const [cls, names] of Object.entries(UNIT)) {
    const cases = []
    const suiteStart = clock
    let suiteFailures = 0
    for (const name of names) {
      const ms = Math.round(baseMs.get(`${cls}#${name}`) * (0.8 + random() * 0.4))
      clock += ms
      total++
      const open = `    <testcase name="${xml(name)}" classname="${cls}" time="${seconds(ms)}"`
      const f = cls === FLAKY[0] ? flakyFailure : brokenFailure
      const attrs = `message="${xml(f.message)}" type="${f.type}"`
      const failure = (tag) =>
        tag === 'failure'
          ? `      <failure ${attrs}>${cdata(f.stack)}</failure>`
          : `      <${tag} ${attrs}>\n        <stackTrace>${cdata(f.stack)}</stackTrace>\n      </${tag}>`
      switch (outcome(night, cls, name)) {
        case 'p':
          cases.push(`${open}/>`)
          break
        case 'r':
          cases.push(`${open}>\n${failure('flakyFailure')}\n    </testcase>`)
          break
        case 'f':
          failures++
          suiteFailures++
          cases.push(`${open}>\n${failure('failure')}\n${failure('rerunFailure')}\n    </testcase>`)
          break
      }
    }
    const timestamp = new Date(suiteStart).toISOString().slice(0, 19)
    const counts = `tests="${names.length}" failures="${suiteFailures}" errors="0" skipped="0"`
    const open = `<testsuite name="${cls}" timestamp="${timestamp}" hostname="${night.runner}" ${counts}`
    suites.push(`  ${open} time="${seconds(clock - suiteStart)}">\n${cases.join('\n')}\n  </testsuite>`)
  }
  const status = failures > 0 ? 'failed' : 'success'
  const props = {
    'ci.branch': 'main',
    'ci.revision': night.revision,
    'ci.pipeline_id': night.pipelineId,
    'ci.pipeline_url': `https://ci.example.com/shop/-/pipelines/${night.pipelineId}`,
    'ci.pipeline_status': status,
    'ci.job_id': night.jobId,
    'ci.job_status': status,
    'ci.runner': night.runner,
    'env.os': 'linux',
  }
  const properties = Object.entries(props)
    .map(([k, v]) => `    <property name="${k}" value="${xml(v)}"/>`)
    .join('\n')
  const counts = `tests="${total}" failures="${failures}" errors="0" time="${seconds(clock - night.start)}"`
  return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="shop unit and integration tests" ${counts}>
  <properties>
${properties}
  </properties>
${suites.join('\n')}
</testsuites>
`
}

// ---------------------------------------------------------------------------------------------------------------
// Browser tests (Playwright JSON reporter).

const E2E = {
  'checkout.spec.ts': { checkout: ['guest can buy a mug', 'shows shipping costs before payment'] },
  'search.spec.ts': { search: ['suggests products while typing'] },
  'account.spec.ts': { account: ['signs in and out'] },
}

function playwrightReport(night) {
  const startTime = night.start + 40 * 60_000
  let clock = startTime
  let count = 0
  const suites = Object.entries(E2E).map(([file, describes]) => ({
    title: file,
    file,
    column: 0,
    line: 0,
    specs: [],
    suites: Object.entries(describes).map(([describe, titles]) => ({
      title: describe,
      file,
      line: 4,
      column: 6,
      specs: titles.map((title, i) => {
        const duration = Math.round(900 + random() * 2400)
        const result = {
          workerIndex: 0,
          parallelIndex: 0,
          status: 'passed',
          duration,
          errors: [],
          stdout: [],
          stderr: [],
          retry: 0,
          startTime: new Date(clock).toISOString(),
          annotations: [],
          attachments: [],
        }
        clock += duration
        count++
        return {
          title,
          ok: true,
          tags: [],
          tests: [
            {
              timeout: 30000,
              annotations: [],
              expectedStatus: 'passed',
              projectId: 'chromium',
              projectName: 'chromium',
              results: [result],
              status: 'expected',
            },
          ],
          id: hex(count * 31 + night.index, 20),
          file,
          line: 5 + i * 12,
          column: 7,
        }
      }),
    })),
  }))
  const report = {
    config: {
      configFile: '/builds/shop/web/playwright.config.ts',
      rootDir: '/builds/shop/web/tests/e2e',
      metadata: {
        actualWorkers: 1,
        'ci.branch': 'main',
        'ci.revision': night.revision,
        'ci.pipeline_id': String(night.pipelineId),
        'ci.pipeline_url': `https://ci.example.com/shop/-/pipelines/${night.pipelineId}`,
        'ci.job_id': String(night.jobId + 1),
        'ci.runner': night.runner,
      },
      projects: [
        { id: 'chromium', name: 'chromium', retries: 1, repeatEach: 1, testDir: '/builds/shop/web/tests/e2e' },
      ],
      version: '1.56.0',
      workers: 1,
    },
    suites,
    errors: [],
    stats: {
      startTime: new Date(startTime).toISOString(),
      duration: clock - startTime + 1200,
      expected: count,
      skipped: 0,
      unexpected: 0,
      flaky: 0,
    },
  }
  return `${JSON.stringify(report, null, 2)}\n`
}

// ---------------------------------------------------------------------------------------------------------------
// API contract tests (CTRF, as jest-ctrf-json-reporter writes it).

const API = [
  ['api.contract.test.ts > products', 'GET /products returns the first page'],
  ['api.contract.test.ts > orders', 'POST /orders validates the cart'],
  ['api.contract.test.ts > health', 'GET /health needs no token'],
]

function ctrfReport(night) {
  const start = night.start + 55 * 60_000
  let clock = start
  const tests = API.map(([suite, name]) => {
    const duration = Math.round(20 + random() * 180)
    // CTRF writers give per-test times in seconds (and the summary in milliseconds).
    const times = { start: Math.floor(clock / 1000), stop: Math.floor((clock + duration) / 1000) }
    clock += duration
    const filePath = '/builds/shop/web/tests/api/api.contract.test.ts'
    const extra = { rawStatus: 'passed', type: 'api', filePath, retries: 0, flaky: false, suite }
    return { name, status: 'passed', duration, ...times, ...extra }
  })
  const report = {
    reportFormat: 'CTRF',
    specVersion: '0.0.0',
    reportId: `00000000-0000-4000-8000-${String(night.pipelineId).padStart(12, '0')}`,
    timestamp: new Date(clock).toISOString(),
    generatedBy: 'jest-ctrf-json-reporter',
    results: {
      tool: { name: 'jest', version: '30.0.0' },
      summary: {
        tests: API.length,
        passed: API.length,
        failed: 0,
        pending: 0,
        skipped: 0,
        other: 0,
        start,
        stop: clock,
      },
      tests,
      environment: {
        appName: 'shop',
        buildName: 'api-contract',
        buildId: String(night.jobId + 2),
        buildUrl: `https://ci.example.com/shop/-/jobs/${night.jobId + 2}`,
        branchName: 'main',
        commit: night.revision,
        osPlatform: 'linux',
      },
    },
  }
  return `${JSON.stringify(report, null, 2)}\n`
}

// ---------------------------------------------------------------------------------------------------------------

mkdirSync(outDir, { recursive: true })
for (const f of readdirSync(outDir)) if (/\.(xml|json)$/.test(f)) rmSync(join(outDir, f))
const written = []
const write = (name, content) => {
  writeFileSync(join(outDir, name), content)
  written.push(name)
}
for (const night of nights) {
  write(`${night.date}-unit.xml`, unitReport(night))
  if (night.index >= NIGHTS - 3) write(`${night.date}-e2e.json`, playwrightReport(night))
  if (night.index >= NIGHTS - 2) write(`${night.date}-api.ctrf.json`, ctrfReport(night))
}
console.log(`wrote ${written.length} reports for ${nights[0].date}..${end} to ${outDir}`)
