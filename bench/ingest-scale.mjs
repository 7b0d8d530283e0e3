// Sizes past any call-stack limit, through the real CLI (issue 12 item 5): `gate` and `run` on a passing report
// of 1M test cases, and `ingest` of 200,000 small report files in one command. Each beside a floor measured in
// the same run: a bare saxes parse of the same report, and reading and hashing the same 200,000 files.
// Peak RSS of `gate` and `run` has a target of our own (the issue sets none): 500 MB, a quarter of a 2 GB CI runner.
// BENCH_SCALE_CASES and BENCH_SCALE_FILES change the sizes.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { SaxesParser } from 'saxes'

const root = join(import.meta.dirname, '..')
const cli = join(root, 'dist', 'cli', 'main.js')
const CASES = Number(process.env.BENCH_SCALE_CASES ?? 1_000_000)
const FILES = Number(process.env.BENCH_SCALE_FILES ?? 200_000)
const tmp = mkdtempSync('/tmp/flakewatch-bench-scale-')
const line = (o) => console.log(JSON.stringify(o))
const log = (s) => process.stderr.write(`  ${s}\n`)
const RSS_TARGET = '<= 500 (ours: a quarter of a 2 GB CI runner)'

/** The CLI under /usr/bin/time: exit code, wall seconds, peak RSS MB. */
function timed(args, opts = {}) {
  const rssFile = join(tmp, 'rss.txt')
  const t0 = performance.now()
  const child = spawnSync('/usr/bin/time', ['-f', '%M', '-o', rssFile, process.execPath, ...args], {
    cwd: tmp,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, FLAKEWATCH_CONFIG: '', CI: '' },
    ...opts,
  })
  const seconds = (performance.now() - t0) / 1000
  const rss = Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop()) / 1024
  return { code: child.status, seconds, rss, stdout: child.stdout, stderr: child.stderr }
}

try {
  // ---------------------------------------------------------------- gate and run on a 1M-case passing report
  const report = join(tmp, 'big.xml')
  log(`generating a passing report of ${CASES} cases`)
  const parts = ['<?xml version="1.0"?><testsuite name="s" timestamp="2026-03-01T10:00:00Z">']
  for (let i = 0; i < CASES; i++) parts.push(`<testcase classname="c${i % 500}" name="t${i}" time="0.001"/>`)
  parts.push('</testsuite>')
  writeFileSync(report, parts.join('\n'))
  parts.length = 0

  let t0 = performance.now()
  let seen = 0
  const sax = new SaxesParser()
  sax.on('opentag', (n) => {
    if (n.name === 'testcase') seen++
  })
  for await (const chunk of createReadStream(report, 'utf8')) sax.write(chunk)
  sax.close()
  const saxesS = (performance.now() - t0) / 1000
  if (seen !== CASES) throw new Error(`bare saxes counted ${seen} of ${CASES}`)
  line({
    bench: 'ingest-scale',
    metric: `baseline: bare saxes parse of the ${CASES}-case report, s`,
    value: +saxesS.toFixed(1),
  })

  // The memory floor: the same parse alone in a process of its own, as the CLI's commands run.
  const bare = `const { SaxesParser } = await import(${JSON.stringify(import.meta.resolve('saxes'))});
    const { createReadStream } = await import('node:fs'); const p = new SaxesParser(); let n = 0;
    p.on('opentag', (t) => { if (t.name === 'testcase') n++ });
    for await (const c of createReadStream(${JSON.stringify(report)}, 'utf8')) p.write(c); p.close();
    if (n !== ${CASES}) process.exit(1)`
  const floor = timed(['--input-type=module', '-e', bare])
  line({
    bench: 'ingest-scale',
    metric: `baseline: bare saxes parse of the ${CASES}-case report in a process of its own, peak RSS MB`,
    value: Math.round(floor.rss),
    exitCode: floor.code,
  })

  log('gate')
  const gate = timed([cli, 'gate', report, '--db', join(tmp, 'gate.db')])
  line({
    bench: 'ingest-scale',
    metric: `gate on a passing report of ${CASES} cases: exit code`,
    value: gate.code,
    target: '0',
    seconds: +gate.seconds.toFixed(1),
    peakRssMb: Math.round(gate.rss),
    ...(gate.code === 0 ? {} : { stderr: gate.stderr.slice(-300) }),
  })
  line({
    bench: 'ingest-scale',
    metric: `gate on a passing report of ${CASES} cases: peak RSS MB`,
    value: Math.round(gate.rss),
    target: RSS_TARGET,
  })

  log('run')
  const out = join(tmp, 'out.xml')
  const copy = `require('node:fs').copyFileSync(${JSON.stringify(report)}, ${JSON.stringify(out)})`
  const run = timed([cli, 'run', '--db', join(tmp, 'run.db'), '--report', out, '--', process.execPath, '-e', copy])
  const db = new Database(join(tmp, 'run.db'), { readonly: true })
  const stored = db.prepare('SELECT sum(total) FROM runs').pluck().get()
  db.close()
  line({
    bench: 'ingest-scale',
    metric: `run on a test command that writes a passing report of ${CASES} cases: exit code`,
    value: run.code,
    target: '0',
    seconds: +run.seconds.toFixed(1),
    peakRssMb: Math.round(run.rss),
    resultsStored: stored,
    ...(run.code === 0 ? {} : { stderr: run.stderr.slice(-300) }),
  })
  line({
    bench: 'ingest-scale',
    metric: `run on a test command that writes a passing report of ${CASES} cases: peak RSS MB`,
    value: Math.round(run.rss),
    target: RSS_TARGET,
  })
  rmSync(report, { force: true })
  rmSync(out, { force: true })

  // ---------------------------------------------------------------- ingest of 200,000 small files
  const dir = join(tmp, 'many')
  log(`writing ${FILES} small reports`)
  for (let f = 0; f < FILES; f += 1000) {
    const sub = join(dir, String(f / 1000).padStart(3, '0'))
    mkdirSync(sub, { recursive: true })
    for (let i = f; i < Math.min(f + 1000, FILES); i++) {
      writeFileSync(
        join(sub, `r${i}.xml`),
        `<?xml version="1.0"?><testsuite name="s" timestamp="2026-03-01T10:00:00Z">` +
          `<testcase classname="c" name="shared ${i % 50}" time="0.001"/>` +
          `<testcase classname="c" name="own ${i}" time="0.002"/></testsuite>\n`,
      )
    }
  }

  t0 = performance.now()
  let bytes = 0
  for (const sub of readdirSync(dir)) {
    for (const f of readdirSync(join(dir, sub))) {
      const content = readFileSync(join(dir, sub, f))
      bytes += content.length
      createHash('sha256').update(content).digest('hex')
    }
  }
  const readS = (performance.now() - t0) / 1000
  line({
    bench: 'ingest-scale',
    metric: `baseline: read and hash ${FILES} small files, s`,
    value: +readS.toFixed(1),
    bytes,
  })

  log('ingest')
  const ingest = timed([cli, 'ingest', dir, '--db', join(tmp, 'many.db'), '--suite', 'many', '--json'])
  const summary = ingest.code === 0 || ingest.code === 2 ? JSON.parse(ingest.stdout || '{}') : {}
  line({
    bench: 'ingest-scale',
    metric: `ingest of ${FILES} small files in one command: exit code`,
    value: ingest.code,
    target: '0',
    ingested: summary.ingested?.length,
    failed: summary.failed?.length,
    seconds: +ingest.seconds.toFixed(1),
    filesPerSecond: Math.round(FILES / ingest.seconds),
    peakRssMb: Math.round(ingest.rss),
    ...(ingest.code === 0 ? {} : { stderr: ingest.stderr.slice(-300) }),
  })
  line({
    bench: 'ingest-scale',
    metric: 'machine load (uptime 1-min average) at the end',
    value: loadavg()[0].toFixed(2),
  })
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
