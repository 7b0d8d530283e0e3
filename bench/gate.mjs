// The CI gate's wall time on a 10,000-test JUnit report with 1,000 quarantined tests, node start included,
// beside a bare `node -e 0` measured in the same run.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const dir = join(import.meta.dirname, '.tmp', 'gate')
rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })
const TESTS = 10_000
const cases = []
const quarantined = []
for (let t = 0; t < TESTS; t++) {
  const name = `case ${t} of the big suite`
  if (t % 10 === 0) {
    quarantined.push({
      test_id: `unit::com.example.Big${t % 100}::${name}`,
      reason: 'flaky',
      owner: 'team',
      expires_at: '2999-01-01T00:00:00Z',
    })
    cases.push(
      `<testcase classname="com.example.Big${t % 100}" name="${name}" time="0.01"><failure message="boom">trace</failure></testcase>`,
    )
  } else cases.push(`<testcase classname="com.example.Big${t % 100}" name="${name}" time="0.01"/>`)
}
writeFileSync(
  join(dir, 'junit.xml'),
  `<?xml version="1.0"?>\n<testsuite name="big">\n${cases.join('\n')}\n</testsuite>\n`,
)
writeFileSync(join(dir, 'q.json'), JSON.stringify({ version: 1, quarantined }))

const cli = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js')
const args = [cli, 'gate', join(dir, 'junit.xml'), '--suite', 'unit', '--quarantine-file', join(dir, 'q.json')]
const check = spawnSync(process.execPath, args, { encoding: 'utf8' })
if (check.status !== 0)
  throw new Error(`gate should pass: ${check.status} ${check.stdout.slice(0, 300)} ${check.stderr.slice(0, 300)}`)

function median(fn, n = 15) {
  const times = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    fn()
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return { median: times[Math.floor(n / 2)], p90: times[Math.floor(n * 0.9)] }
}
const gate = median(() => execFileSync(process.execPath, args, { stdio: 'ignore' }))
const bare = median(() => execFileSync(process.execPath, ['-e', '0'], { stdio: 'ignore' }))
const line = (o) => console.log(JSON.stringify(o))
line({
  bench: 'gate',
  metric: 'wall ms, 10k tests / 1k quarantined (median of 15)',
  value: Math.round(gate.median),
  target: '<= 300',
  p90: Math.round(gate.p90),
})
line({ bench: 'gate', metric: 'baseline: node -e 0 wall ms (median of 15)', value: Math.round(bare.median) })
line({ bench: 'gate', metric: 'ratio gate / node -e 0', value: +(gate.median / bare.median).toFixed(2) })
rmSync(dir, { recursive: true, force: true })
