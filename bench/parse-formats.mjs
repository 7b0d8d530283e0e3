// Parse speed and peak memory of each report format issue 29 added, on a ~100 MB file of it, beside a bare parse of
// the same file measured in the same run: for the line formats a bare JSON.parse (or split) of every line, for the
// XML ones a bare saxes stream, for the JSON documents one bare JSON.parse of the whole text. Each measurement runs
// in a process of its own, so its peak RSS (maxRSS) is its own. flakewatch's figure is its parser alone
// (streamReport, every case pulled, nothing stored): ingest-memory.mjs measures the store on top for JUnit.
// BENCH_FORMATS picks formats (comma-separated), BENCH_FORMAT_MB the file size (default 100). Files go to /tmp and
// are deleted after use.
import { execFileSync } from 'node:child_process'
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const MB = 1024 * 1024
const SIZE = Number(process.env.BENCH_FORMAT_MB ?? 100) * MB
const tmp = mkdtempSync('/tmp/flakewatch-bench-formats-')
const line = (o) => console.log(JSON.stringify(o))
const log = (s) => process.stderr.write(`  ${s}\n`)

/** Writes pieces from `next(i)` until the file reaches SIZE bytes; `head` and `tail` frame them. */
async function writeSized(file, head, next, tail, sep = '\n') {
  const out = createWriteStream(file)
  let bytes = 0
  const write = (s) => {
    bytes += Buffer.byteLength(s)
    return out.write(s) ? null : new Promise((r) => out.once('drain', r))
  }
  await write(head)
  for (let i = 0; bytes < SIZE; i++) await write((i === 0 ? '' : sep) + next(i))
  await write(tail)
  await new Promise((r) => out.end(r))
}

const fail = (i) => i % 50 === 7
/** Each format: how to write its file, and what its bare parse is. */
const FORMATS = {
  'go-json': {
    bare: 'lines',
    write: (f) =>
      writeSized(
        f,
        '',
        (i) => {
          const t = `"Package":"example.com/shop/pkg${i % 100}","Test":"TestCase${i}"`
          const end = fail(i) ? 'fail' : 'pass'
          return [
            `{"Time":"2026-01-01T00:00:00.000Z","Action":"run",${t}}`,
            `{"Time":"2026-01-01T00:00:00.001Z","Action":"output",${t},"Output":"=== RUN   TestCase${i}\\n"}`,
            `{"Time":"2026-01-01T00:00:00.002Z","Action":"${end}",${t},"Elapsed":0.01}`,
          ].join('\n')
        },
        '\n',
      ),
  },
  tap: {
    bare: 'lines',
    write: (f) =>
      writeSized(
        f,
        'TAP version 13\n',
        (i) =>
          fail(i)
            ? `not ok ${i + 1} - test case number ${i}\n  ---\n  message: 'expected 1 to be 2'\n  ...`
            : `ok ${i + 1} - test case number ${i}`,
        '\n',
      ),
  },
  nunit: {
    bare: 'xml',
    write: (f) =>
      writeSized(
        f,
        '<?xml version="1.0"?>\n<test-run>\n<test-suite type="Assembly" name="a.dll">\n',
        (i) =>
          `<test-case fullname="Shop.Tests.Cart${i % 100}.Adds(${i})" name="Adds(${i})" classname="Shop.Tests.Cart${i % 100}" result="${fail(i) ? 'Failed' : 'Passed'}" duration="0.01"/>`,
        '\n</test-suite>\n</test-run>\n',
      ),
  },
  xunit: {
    bare: 'xml',
    write: (f) =>
      writeSized(
        f,
        '<?xml version="1.0"?>\n<assemblies>\n<assembly name="a.dll">\n<collection name="c">\n',
        (i) =>
          `<test name="Shop.Tests.Cart${i % 100}.Adds(n: ${i})" type="Shop.Tests.Cart${i % 100}" method="Adds" result="${fail(i) ? 'Fail' : 'Pass'}" time="0.01"/>`,
        '\n</collection>\n</assembly>\n</assemblies>\n',
      ),
  },
  'bazel-bep': {
    bare: 'lines',
    write: (f) =>
      writeSized(
        f,
        '{"id":{"started":{}},"started":{"uuid":"bench","startTimeMillis":"1767225600000"}}\n',
        (i) =>
          `{"id":{"testResult":{"label":"//shop/pkg${i % 100}:t${i}","run":1,"shard":1,"attempt":1}},"testResult":{"status":"${fail(i) ? 'FAILED' : 'PASSED'}","testAttemptDurationMillis":"10"}}\n` +
          `{"id":{"testSummary":{"label":"//shop/pkg${i % 100}:t${i}"}},"testSummary":{"overallStatus":"${fail(i) ? 'FAILED' : 'PASSED'}"}}`,
        '\n',
      ),
  },
  'cucumber-messages': {
    bare: 'lines',
    write: (f) =>
      writeSized(
        f,
        '{"meta":{"protocolVersion":"32.2.0","implementation":{"name":"cucumber-js"}}}\n',
        (i) =>
          [
            `{"pickle":{"id":"p${i}","uri":"features/f${i % 100}.feature","name":"scenario ${i}","astNodeIds":["a${i}"],"location":{"line":${i + 2}}}}`,
            `{"testCase":{"id":"c${i}","pickleId":"p${i}"}}`,
            `{"testCaseStarted":{"id":"s${i}","testCaseId":"c${i}","attempt":0,"timestamp":{"seconds":1767225600,"nanos":0}}}`,
            `{"testStepFinished":{"testCaseStartedId":"s${i}","testStepResult":{"status":"${fail(i) ? 'FAILED' : 'PASSED'}"${fail(i) ? ',"message":"AssertionError: 1 == 2"' : ''}}}}`,
            `{"testCaseFinished":{"testCaseStartedId":"s${i}","timestamp":{"seconds":1767225600,"nanos":5000000},"willBeRetried":false}}`,
          ].join('\n'),
        '\n',
      ),
  },
  'mocha-json': {
    bare: 'json',
    write: (f) =>
      writeSized(
        f,
        '{"stats":{"suites":1,"tests":1,"passes":1},"tests":[\n',
        (i) =>
          `{"title":"adds ${i}","fullTitle":"cart adds ${i}","file":"/src/cart${i % 100}.spec.js","duration":1,"currentRetry":0,"err":${fail(i) ? '{"message":"1 == 2","stack":"AssertionError: 1 == 2\\n    at x (a.js:1:1)"}' : '{}'}}`,
        '\n]}\n',
        ',\n',
      ),
  },
  mochawesome: {
    bare: 'json',
    write: (f) =>
      writeSized(
        f,
        '{"stats":{"suites":1,"passPercent":98},"results":[{"file":"/src/cart.spec.js","suites":[{"file":"/src/cart.spec.js","tests":[\n',
        (i) =>
          `{"title":"adds ${i}","fullTitle":"cart adds ${i}","duration":1,"state":"${fail(i) ? 'failed' : 'passed'}","err":${fail(i) ? '{"message":"1 == 2","estack":"AssertionError: 1 == 2"}' : '{}'}}`,
        '\n]}]}]}\n',
        ',\n',
      ),
  },
  'rspec-json': {
    bare: 'json',
    write: (f) =>
      writeSized(
        f,
        '{"version":"3.13.0","examples":[\n',
        (i) =>
          `{"id":"./spec/cart${i % 100}_spec.rb[1:${i}]","description":"adds ${i}","full_description":"Cart adds ${i}","status":"${fail(i) ? 'failed' : 'passed'}","file_path":"./spec/cart${i % 100}_spec.rb","line_number":${i},"run_time":0.001${fail(i) ? ',"exception":{"class":"RSpec::Expectations::ExpectationNotMetError","message":"expected 2","backtrace":["./spec/a_spec.rb:3"]}' : ''}}`,
        '\n]}\n',
        ',\n',
      ),
  },
  'cucumber-json': {
    bare: 'json',
    write: (f) =>
      writeSized(
        f,
        '[{"uri":"features/cart.feature","keyword":"Feature","name":"Cart","elements":[\n',
        (i) =>
          `{"type":"scenario","keyword":"Scenario","name":"scenario ${i}","line":${i + 2},"steps":[{"keyword":"Given ","name":"a cart","line":${i + 3},"result":{"status":"passed","duration":1000}},{"keyword":"Then ","name":"it adds","line":${i + 4},"result":{"status":"${fail(i) ? 'failed' : 'passed'}","duration":1000${fail(i) ? ',"error_message":"AssertionError: 1 == 2"' : ''}}}]}`,
        '\n]}]\n',
        ',\n',
      ),
  },
  'pytest-json': {
    bare: 'json',
    write: (f) =>
      writeSized(
        f,
        '{"created":1767225600,"duration":10,"exitcode":1,"root":"/repo","summary":{"total":1},"tests":[\n',
        (i) =>
          `{"nodeid":"tests/test_cart${i % 100}.py::TestCart::test_adds[${i}]","lineno":3,"outcome":"${fail(i) ? 'failed' : 'passed'}","setup":{"duration":0.0001,"outcome":"passed"},"call":{"duration":0.001,"outcome":"${fail(i) ? 'failed' : 'passed'}"${fail(i) ? ',"crash":{"message":"assert 1 == 2"},"longrepr":"def test_adds():\\n>   assert 1 == 2\\nE   assert 1 == 2"' : ''}},"teardown":{"duration":0.0001,"outcome":"passed"}}`,
        '\n]}\n',
        ',\n',
      ),
  },
}

/** A bare parse of the file in a process of its own: what any reader of that syntax pays. */
const BARE = {
  lines: `import { createReadStream } from 'node:fs'
    import { createInterface } from 'node:readline'
    let n = 0
    for await (const l of createInterface({ input: createReadStream(FILE, 'utf8'), crlfDelay: Infinity })) {
      if (l.startsWith('{')) JSON.parse(l)
      n++
    }
    DONE(n)`,
  xml: `import { createReadStream } from 'node:fs'
    import { SaxesParser } from 'saxes'
    const p = new SaxesParser(); let n = 0; p.on('opentag', (t) => { if (t.name === 'test-case' || t.name === 'test') n++ })
    for await (const c of createReadStream(FILE, 'utf8')) p.write(c)
    p.close()
    DONE(n)`,
  json: `import { readFileSync } from 'node:fs'
    const doc = JSON.parse(readFileSync(FILE, 'utf8'))
    DONE(Array.isArray(doc) ? doc.length : Object.keys(doc).length)`,
}

const PARSER = `import { streamReport } from './dist/ingest/parse-report.js'
  import { sourceFromFile } from './dist/ingest/source.js'
  const s = await streamReport(sourceFromFile(FILE))
  let n = 0
  for await (const chunk of s.cases) n += chunk.length
  if (s.format !== FORMAT) throw new Error('detected ' + s.format)
  DONE(n)`

function measure(code, file, format) {
  const script = `const FILE = ${JSON.stringify(file)}; const FORMAT = ${JSON.stringify(format)}
    const t0 = performance.now()
    const DONE = (n) => console.log(JSON.stringify({ n, seconds: (performance.now() - t0) / 1000, rss: process.resourceUsage().maxRSS / 1024 }))
    ${code}`
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 16 * MB,
  })
  return JSON.parse(out.trim().split('\n').pop())
}

const pick = (process.env.BENCH_FORMATS ?? Object.keys(FORMATS).join(',')).split(',')
try {
  for (const format of pick) {
    const spec = FORMATS[format]
    const file = join(tmp, `report-${format}`)
    await spec.write(file)
    const mb = statSync(file).size / MB
    const bare = measure(BARE[spec.bare], file, format)
    const ours = measure(PARSER, file, format)
    rmSync(file, { force: true })
    const size = `${mb.toFixed(0)} MB ${format}`
    log(
      `${size}: ${ours.n} results in ${ours.seconds.toFixed(1)} s, ${ours.rss.toFixed(0)} MB (bare ${bare.rss.toFixed(0)} MB)`,
    )
    const bareWhat = { lines: 'line-by-line JSON.parse', xml: 'saxes stream', json: 'JSON.parse of the whole text' }[
      spec.bare
    ]
    line({
      bench: 'parse-formats',
      metric: `baseline: bare ${bareWhat}, ${size}, seconds`,
      value: Number(bare.seconds.toFixed(2)),
      peakRssMb: Math.round(bare.rss),
    })
    line({
      bench: 'parse-formats',
      metric: `results/s, ${size}, flakewatch parser`,
      value: Math.round(ours.n / ours.seconds),
      seconds: Number(ours.seconds.toFixed(2)),
      ratioToBareSeconds: Number((ours.seconds / bare.seconds).toFixed(1)),
      results: ours.n,
    })
    line({
      bench: 'parse-formats',
      metric: `peak RSS MB, ${size}, flakewatch parser`,
      value: Math.round(ours.rss),
      bareRssMb: Math.round(bare.rss),
      ratioToBare: Number((ours.rss / bare.rss).toFixed(1)),
    })
  }
  line({
    bench: 'parse-formats',
    metric: 'machine load (uptime 1-min average) at the end',
    value: loadavg()[0].toFixed(2),
  })
} finally {
  rmSync(tmp, { recursive: true, force: true })
}
