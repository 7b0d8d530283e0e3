// Quarantine rules against hostile patterns (issue 33). Rules run on RE2, so the time to match a message grows
// linearly with its length whatever the pattern. Each pattern is timed on `111…1!` (the near-miss that makes a
// backtracking engine double its work per character: 61 characters took it over 40 s) at 4,096 characters (the
// cap a rule reads) and at 65,536 (16 times longer, past the cap, to show the growth), beside a plain pattern
// in the same run: the ratios hold on a noisy machine when absolute times do not.
import { compileLinearRegex } from '../dist/linear-regex.js'
import { compileRule } from '../dist/quarantine/rules.js'

const PATTERNS = ['(\\w|\\d)+$', '(a|a)*$', '(a+)+$', '^(\\w+\\s?)*$', '(\\d|\\d\\d)+!x']
const BASELINE = 'Timeout \\d+ms exceeded'

/** Median ms of one call, over 9 samples of enough calls to take ~30 ms each. */
function msPerCall(fn) {
  for (let i = 0; i < 20; i++) fn()
  let rounds = 1
  for (;;) {
    const t0 = performance.now()
    for (let i = 0; i < rounds; i++) fn()
    if (performance.now() - t0 > 30 || rounds > 1e6) break
    rounds *= 2
  }
  const samples = []
  for (let s = 0; s < 9; s++) {
    const t0 = performance.now()
    for (let i = 0; i < rounds; i++) fn()
    samples.push((performance.now() - t0) / rounds)
  }
  samples.sort((a, b) => a - b)
  return samples[4]
}

const hostile = (length) => `${'1'.repeat(length - 1)}!`
const rule = (message) =>
  compileRule({
    id: 'r',
    match: { message, allowBroad: true },
    reason: 'bench',
    owner: null,
    issueUrl: null,
    createdAt: '2026-01-01T00:00:00Z',
    createdBy: 'bench',
    expiresAt: null,
  })
const subject = (message) => ({
  test: { testId: 'unit::m::t', name: 't', module: 'm', file: null },
  status: 'failed',
  message,
  branch: null,
  env: {},
})

const line = (o) => console.log(JSON.stringify(o))
const atCap = subject(hostile(4096))
const baseline = rule(BASELINE)
const base = msPerCall(() => baseline.matches(atCap))
line({
  bench: 'rule-redos',
  metric: `baseline /${BASELINE}/ on 4,096 chars: µs per failure`,
  value: +(base * 1000).toFixed(2),
})
let worst = 0
let slowest = 0
const short4096 = hostile(4096)
const long65536 = hostile(65_536)
// One pass first, so that the first pattern is not also the one that pays for compiling the engine's code.
for (const p of PATTERNS) for (let i = 0; i < 50; i++) compileLinearRegex(p).test(long65536)
for (const p of PATTERNS) {
  const re = compileLinearRegex(p)
  const short = msPerCall(() => re.test(short4096))
  const long = msPerCall(() => re.test(long65536))
  const r = rule(p)
  const gate = msPerCall(() => r.matches(atCap))
  worst = Math.max(worst, long / short)
  slowest = Math.max(slowest, gate)
  line({
    bench: 'rule-redos',
    metric: `/${p}/: time ratio 65,536 vs 4,096 chars (linear: 16)`,
    value: +(long / short).toFixed(1),
    target: '<= 64 (backtracking: ~2^61,000)',
    us_per_failure_at_cap: +(gate * 1000).toFixed(2),
  })
}
line({
  bench: 'rule-redos',
  metric: 'worst time ratio 65,536 vs 4,096 chars (linear: 16)',
  value: +worst.toFixed(1),
  target: '<= 64 (backtracking: ~2^61,000)',
})
line({
  bench: 'rule-redos',
  metric: 'slowest hostile rule at the cap: µs per failure (a backtracking engine: > 40 s at 61 chars)',
  value: +(slowest * 1000).toFixed(2),
  vs_baseline: +(slowest / base).toFixed(1),
})
