// The fuzzers of test/fuzz/, deep: 10^5 inputs per input surface (every report format, the store, the quarantine
// and config files, bundles, rule patterns, the HTTP API, MCP tool calls, CLI arguments), seeded, the seed
// recorded. Not a timing bench (no lock needed): it records per surface the inputs run, the failures found and the
// time. Each failure is shrunk and kept as a regression case in test/fixtures/fuzz/regressions/<surface>/ (listed
// in its README, replayed by test/fuzz/regressions.test.ts); fix the bug, then describe the case there.
//
// One vitest process, one file at a time (the machine has 2 cores: parallel fuzzers only share them). Inputs are
// smaller than in CI (seeds cut to 12 KB, milder repeats and nesting: test/fuzz/support.ts) so that 10^5 per
// surface fit bench/run.mjs's 30 minutes; the time is shared out between surfaces, and a surface that runs out of
// its share records how many inputs it ran.
//   BENCH_FUZZ_RUNS (default 100000), BENCH_FUZZ_SEED (default: from the clock), BENCH_FUZZ_MINUTES (default 26),
//   BENCH_FUZZ_SURFACES (comma-separated names, default all).
import { spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const runs = Number(process.env.BENCH_FUZZ_RUNS ?? 100_000)
const seed = Number(process.env.BENCH_FUZZ_SEED ?? Date.now() % 2 ** 31)
const minutes = Number(process.env.BENCH_FUZZ_MINUTES ?? 26)
const surfaces = process.env.BENCH_FUZZ_SURFACES ?? ''
const line = (o) => console.log(JSON.stringify(o))
const log = (s) => process.stderr.write(`  ${s}\n`)

// The surfaces, in the order vitest runs the files below; their count shares the time out.
const FILES = ['parsers', 'store-ingest', 'round-trip', 'inputs', 'api', 'cli-args'].map(
  (f) => `test/fuzz/${f}.test.ts`,
)
const COUNT = surfaces ? surfaces.split(',').length : 17 + 1 + 2 + 7 + 5 + 1

const tmp = mkdtempSync(join(tmpdir(), 'flakewatch-bench-fuzz-'))
const out = join(tmp, 'surfaces.jsonl')
writeFileSync(out, '')
const load = loadavg()[0]
const started = Date.now()
const res = spawnSync(
  process.execPath,
  [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...FILES, '--maxWorkers=1', '--no-file-parallelism'],
  {
    cwd: root,
    encoding: 'utf8',
    env: {
      ...process.env,
      CI: 'true',
      FLAKEWATCH_FUZZ_BENCH: out,
      FLAKEWATCH_FUZZ_RUNS: String(runs),
      FLAKEWATCH_FUZZ_SEED: String(seed),
      FLAKEWATCH_FUZZ_DEADLINE: String(started + minutes * 60_000),
      FLAKEWATCH_FUZZ_SURFACE_COUNT: String(COUNT),
      ...(surfaces ? { FLAKEWATCH_FUZZ_SURFACES: surfaces } : {}),
    },
    maxBuffer: 256 << 20,
  },
)
const results = readFileSync(out, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l))
rmSync(tmp, { recursive: true, force: true })
if (results.length === 0) {
  process.stderr.write(res.stdout.slice(-4000) + res.stderr.slice(-4000))
  throw new Error(`bench/fuzz.mjs: vitest ran no surface (exit ${res.status})`)
}

// Every new kept input gets a README row, so that the regression test (which requires one) names it until the
// bug is fixed and the row says what it was.
const readme = join(root, 'test', 'fixtures', 'fuzz', 'regressions', 'README.md')
const date = new Date().toISOString().slice(0, 10)
for (const r of results) {
  for (const f of r.findings) {
    const name = f.file.replace('test/fixtures/fuzz/regressions/', '')
    if (existsSync(readme) && !readFileSync(readme, 'utf8').includes(`\`${name}\``)) {
      const what = f.error.replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 300)
      appendFileSync(
        readme,
        `| \`${name}\` | found by bench/fuzz.mjs ${date} (seed ${f.seed}), not yet fixed: ${what} |\n`,
      )
    }
    log(`${r.surface}: FOUND ${f.error.slice(0, 200)} -> ${f.file} (×${f.repeats}, seed ${f.seed}, path ${f.path})`)
  }
}

// Results are kept per surface in bench/fuzz-results.json, so that a run of some surfaces (BENCH_FUZZ_SURFACES)
// adds to the rows of the others rather than dropping them; each row says when and from which seed.
const kept = join(root, 'bench', 'fuzz-results.json')
const all = existsSync(kept) ? JSON.parse(readFileSync(kept, 'utf8')) : {}
for (const r of results) {
  all[r.surface] = {
    at: new Date().toISOString().slice(0, 16).replace('T', ' '),
    runs: r.runs,
    failures: r.findings.length,
    s: Math.round(r.ms / 1000),
    per_s: Math.round(r.runs / Math.max(0.001, r.ms / 1000)),
    heap_kept_mb: r.maxRetainedMB,
    ...(r.surface.startsWith('report-') ? { held_share: r.maxHeldShare } : {}),
    ...(r.stopped ? { stopped: r.stopped } : {}),
    seed,
    load: load.toFixed(1),
    ...(r.findings.length ? { found: r.findings.map((f) => f.file.split('/').slice(-2).join('/')) } : {}),
  }
}
writeFileSync(kept, `${JSON.stringify(all, null, 2)}\n`)
let total = 0
let failures = 0
for (const [surface, r] of Object.entries(all).sort(([a], [b]) => a.localeCompare(b))) {
  const { runs: value, ...notes } = r
  total += value
  failures += r.failures
  line({ bench: 'fuzz', metric: `${surface} inputs`, value, target: `${runs}`, ...notes })
}
line({
  bench: 'fuzz',
  metric: 'surfaces, inputs, failures',
  value: `${Object.keys(all).length}, ${total}, ${failures}`,
  this_run_s: Math.round((Date.now() - started) / 1000),
  this_run_surfaces: results.length,
})
if (res.status !== 0)
  log(
    `vitest exited ${res.status}: ${res.stdout
      .split('\n')
      .filter((l) => /FAIL|Error/.test(l))
      .slice(0, 5)
      .join(' / ')}`,
  )
