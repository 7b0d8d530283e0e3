// Runs every benchmark script in this folder, one at a time (the machine has 2 cores), and writes the figures
// to bench/RESULTS.md. Each script prints JSON lines: { bench, metric, value, target?, ... }; every script measures
// its own baseline in the same run, so the ratios hold on a noisy machine even when absolute times do not.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { basename, join } from 'node:path'

// `bench/gate.mjs` and `gate.mjs` name the same script. `--record <script> <file>` records the JSON lines a run of
// that script wrote to <file> instead of running it: for benches run by hand over hours (bench/pg-scale.mjs).
const argv = process.argv.slice(2)
const recorded = argv[0] === '--record' ? { script: basename(argv[1] ?? ''), file: argv[2] } : null
if (recorded && !(recorded.script.endsWith('.mjs') && recorded.file)) {
  throw new Error('usage: node bench/run.mjs --record <script>.mjs <file of its JSON lines>')
}
const only = recorded ? [recorded.script] : argv.map((o) => basename(o))
const here = import.meta.dirname
const scripts = readdirSync(here)
  .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs')
  // A name ending in .mjs picks that script alone (`ingest.mjs` must not also pick pg-ingest.mjs).
  .filter((f) => only.length === 0 || only.some((o) => (o.endsWith('.mjs') ? f === o : f.includes(o))))
  .sort()

// Figures are kept per script in results.json, so that running one benchmark updates only its own rows.
const store = join(here, 'results.json')
const saved = existsSync(store) ? JSON.parse(readFileSync(store, 'utf8')) : {}
const rows = []
const failures = []
const take = (script, out) => {
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue
    const row = JSON.parse(line)
    // Detail lines without a metric stay out of the table; each script summarises itself in metric lines.
    if (row.metric === undefined) continue
    rows.push({ script, ...row })
    process.stderr.write(`  ${row.metric}: ${row.value}${row.target ? ` (target ${row.target})` : ''}\n`)
  }
}
for (const script of scripts) {
  if (recorded) {
    take(script, readFileSync(recorded.file, 'utf8'))
    continue
  }
  process.stderr.write(`bench: ${script}\n`)
  const started = Date.now()
  try {
    const out = execFileSync(process.execPath, ['--expose-gc', join(here, script)], {
      cwd: join(here, '..'),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 << 20,
      timeout: 30 * 60_000,
    })
    take(script, out)
  } catch (error) {
    failures.push({ script, error: String(error.message).split('\n')[0] })
  }
  process.stderr.write(`  (${((Date.now() - started) / 1000).toFixed(0)} s)\n`)
}

for (const script of scripts) delete saved[script]
for (const r of rows)
  (saved[r.script] ??= { at: new Date().toISOString(), node: process.version, rows: [] }).rows.push(r)
writeFileSync(store, `${JSON.stringify(saved, null, 2)}\n`)
const all = Object.keys(saved)
  .sort()
  .flatMap((s) => saved[s].rows.map((r) => ({ ...r, at: saved[s].at.slice(0, 10) })))

const extra = (r) =>
  Object.entries(r)
    .filter(([k]) => !['script', 'bench', 'metric', 'value', 'target', 'at'].includes(k))
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)
    .join(', ')
const md = [
  '# Benchmark results',
  '',
  `Written by \`npm run bench\` (node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}). \`npm run bench -- <name>\` re-runs one script and keeps the others' rows.`,
  'Each benchmark measures its own baseline in the same run; compare ratios, not absolute times, across machines.',
  '',
  '| bench | metric | value | target | measured | notes |',
  '| --- | --- | ---: | --- | --- | --- |',
  ...all.map((r) => `| ${r.bench} | ${r.metric} | ${r.value} | ${r.target ?? ''} | ${r.at} | ${extra(r)} |`),
  '',
  ...(failures.length ? ['## Failed', '', ...failures.map((f) => `- ${f.script}: ${f.error}`), ''] : []),
]
writeFileSync(join(here, 'RESULTS.md'), md.join('\n'))
if (failures.length) process.exitCode = 1
