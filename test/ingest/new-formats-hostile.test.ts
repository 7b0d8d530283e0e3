import { describe, expect, it } from 'vitest'
import { refused } from './helpers.js'
import { ReportLimitError } from '../../src/errors.js'
import { parseReport, sourceFromBuffer } from '../../src/ingest/index.js'
import { sourceLines } from '../../src/ingest/line-stream.js'
import { MAX_JSON_DEPTH, MAX_LINE_CHARS, MAX_NAME, MAX_TAP_DEPTH, MAX_XML_DEPTH } from '../../src/limits.js'

/** Hostile input for each format issue 29 added: refused with the file (and line), or read safely. */

const goEvent = (action: string, test: string, extra = '') =>
  `{"Time":"2026-01-01T00:00:00Z","Action":"${action}","Package":"p","Test":${JSON.stringify(test)}${extra}}`
const bep = (lines: string[]) =>
  ['{"id":{"started":{}},"started":{"uuid":"u1","startTimeMillis":"1767225600000"}}', ...lines].join('\n')
const testResult = (label: string, run: number, status: string) =>
  `{"id":{"testResult":{"label":"${label}","run":${run},"shard":1,"attempt":1}},"testResult":{"status":"${status}"}}`
const nunit = (body: string) =>
  `<?xml version="1.0"?>\n<test-run>\n<test-suite type="Assembly" name="a.dll">\n${body}\n</test-suite>\n</test-run>\n`
const xunit = (body: string) =>
  `<?xml version="1.0"?>\n<assemblies>\n<assembly name="a.dll">\n<collection>\n${body}\n</collection>\n</assembly>\n</assemblies>\n`

describe('deep nesting', () => {
  it('JSON lines nested past the limit (Go, Bazel): refused at the line', async () => {
    const deep = `{"Action":"output","Package":"p","Output":"x","x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`
    const e = await refused('deep-go.json', `${goEvent('run', 'T')}\n${deep}\n`)
    expect(e).toMatchObject({ line: 2, detail: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` })
    const b = await refused(
      'deep-bep.json',
      bep([`{"id":{"progress":{}},"x":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`]),
    )
    expect(b).toMatchObject({ line: 2 })
  })

  it('TAP subtests indented past the limit', async () => {
    const lines = ['TAP version 14']
    for (let d = 0; d <= MAX_TAP_DEPTH; d++) lines.push(`${' '.repeat(4 * d)}# Subtest: s${d}`)
    lines.push(`${' '.repeat(4 * (MAX_TAP_DEPTH + 1))}ok 1 - leaf`)
    const e = await refused('deep.tap', lines.join('\n'))
    expect(e).toMatchObject({ line: MAX_TAP_DEPTH + 2, detail: `subtests nested deeper than ${MAX_TAP_DEPTH} levels` })
  })

  it('NUnit and xUnit.net elements nested past the XML limit', async () => {
    const deep = '<test-suite>'.repeat(MAX_XML_DEPTH) + '</test-suite>'.repeat(MAX_XML_DEPTH)
    expect((await refused('deep-nunit.xml', nunit(deep))).message).toMatch(/nested deeper than 256 levels/)
    const x = '<traits>'.repeat(MAX_XML_DEPTH) + '</traits>'.repeat(MAX_XML_DEPTH)
    expect((await refused('deep-xunit.xml', xunit(x))).message).toMatch(/nested deeper than 256 levels/)
  })
})

describe('huge counts and sizes', () => {
  it('a line longer than the limit is refused before it is held whole', async () => {
    const long = `{"Action":"output","Package":"p","Test":"T","Output":"${'x'.repeat(MAX_LINE_CHARS)}"}`
    const e = await refused('long-line.json', `${goEvent('run', 'T')}\n${long}\n`)
    expect(e).toBeInstanceOf(ReportLimitError)
    expect(e.message).toMatch(/line 2 \(characters\) is over the limit of 16,777,216/)
    const lines: string[] = []
    const small = sourceFromBuffer('small.txt', 'ab\ncdefgh\n')
    const error: unknown = await (async () => {
      for await (const batch of sourceLines(small, 4)) for (const l of batch) lines.push(l.text)
    })().catch((x: unknown) => x)
    expect(lines).toEqual([])
    expect(error).toBeInstanceOf(ReportLimitError)
    expect((error as Error).message).toMatch(/line 2 \(characters\) is over the limit of 4/)
  })

  it('Bazel: more results for one target than the attempt limit', async () => {
    const results = Array.from({ length: 101 }, (_, i) => testResult('//a:t', i + 1, 'FAILED'))
    const e = await refused('many-runs.json', bep(results))
    expect(e).toBeInstanceOf(ReportLimitError)
    expect(e.message).toMatch(/line 102: testResult events of \/\/a:t is over the limit of 100/)
    // Raised by the caller, the same file is read.
    const ok = await parseReport(sourceFromBuffer('many-runs.json', bep(results)), {
      limits: { maxAttemptsPerResult: 200 },
    })
    expect(ok.cases[0]!.attempts).toHaveLength(101)
  })

  it('a test name over the identity limit, in each format, names the line', async () => {
    const big = 'n'.repeat(MAX_NAME + 1)
    const detail = `is ${MAX_NAME + 1} characters long (limit ${MAX_NAME})`
    expect(await refused('name.json', `${goEvent('run', big)}\n`)).toMatchObject({
      line: 1,
      detail: `test name ${detail}`,
    })
    expect(await refused('name.tap', `TAP version 13\nok 1 - ${big}\n`)).toMatchObject({ line: 2 })
    expect(await refused('name-bep.json', bep([testResult(big, 1, 'PASSED')]))).toMatchObject({ line: 2 })
    expect(await refused('name-nunit.xml', nunit(`<test-case fullname="${big}" result="Passed"/>`))).toMatchObject({
      line: 4,
    })
    expect(await refused('name-xunit.xml', xunit(`<test name="${big}" type="T" result="Pass"/>`))).toMatchObject({
      line: 5,
    })
  })

  it('a million lines of output for one Go test keep at most 64 KB of it', async () => {
    const lines = [goEvent('run', 'T')]
    const output = goEvent('output', 'T', `,"Output":"${'o'.repeat(100)}\\n"`)
    for (let i = 0; i < 5_000; i++) lines.push(output)
    lines.push(goEvent('fail', 'T'))
    const r = await parseReport(sourceFromBuffer('chatty.json', lines.join('\n')))
    expect(r.cases[0]!.status).toBe('failed')
    expect(r.cases[0]!.stack!.length).toBeLessThan(70 * 1024)
    expect(r.cases[0]!.stack).toMatch(/… \[output cut\]$/)
  })
})

describe('JSON document formats: counts the report states', () => {
  it('mocha currentRetry and rspec-retry retry_attempts of a billion: refused, naming the field', async () => {
    const mocha = JSON.stringify({
      stats: { suites: 1, passes: 1 },
      tests: [{ title: 't', fullTitle: 'a t', file: 'a.js', duration: 1, currentRetry: 1_000_000_000, err: {} }],
    })
    const m = await refused('retries.json', mocha)
    expect(m.message).toMatch(/tests\[0\]\.currentRetry \+ 1 is 1,000,000,001, over the limit of 100/)
    const rspec = JSON.stringify({
      version: '3.12.0',
      examples: [
        {
          description: 't',
          full_description: 'a t',
          status: 'passed',
          file_path: './a_spec.rb',
          retry_attempts: 1_000_000_000,
        },
      ],
    })
    const r = await refused('rspec-retries.json', rspec)
    expect(r.message).toMatch(/examples\[0\]\.retry_attempts \+ 1 is 1,000,000,001, over the limit of 100/)
  })

  it('rspec-retry metadata, where a formatter wrote it: the failed tries, then the pass', async () => {
    const rspec = JSON.stringify({
      version: '3.12.0',
      examples: [
        {
          description: 't',
          full_description: 'a t',
          status: 'passed',
          file_path: './spec/a_spec.rb',
          retry_attempts: 2,
          retry_exceptions: ['Net::ReadTimeout', 'Net::ReadTimeout'],
        },
      ],
    })
    const r = await parseReport(sourceFromBuffer('rspec-retry.json', rspec))
    expect(r.cases[0]).toMatchObject({ module: 'spec/a_spec.rb', flakyOnRetry: true, message: 'Net::ReadTimeout' })
    expect(r.cases[0]!.attempts.map((a) => a.status)).toEqual(['failed', 'failed', 'passed'])
  })

  // Each JSON document format, detected from its own head: nested past the limit, or opening with invalid UTF-8.
  it.each([
    ['mocha-json', '{"stats":{"passes":1},"tests":[{"fullTitle":"a","title":"a"}],'],
    ['mochawesome', '{"stats":{"passPercent":100},"results":[],'],
    ['rspec-json', '{"version":"3.12.0","examples":[],'],
    ['cucumber-json', '[{"uri":"a.feature","elements":[],"keyword":"Feature",'],
    ['pytest-json', '{"created":1,"duration":0,"exitcode":0,"root":"/r","tests":[],'],
  ] as const)('%s nested past the JSON limit, or starting with invalid UTF-8: refused', async (format, head) => {
    const tail = format === 'cucumber-json' ? '}]' : '}'
    const deep = `${head}"x":${'['.repeat(10_000)}${']'.repeat(10_000)}${tail}`
    const e = await refused(`deep-${format}.json`, deep)
    expect(e.message).toMatch(/JSON nested deeper than 256 levels/)
    const bad = Buffer.concat([Buffer.from([0xc3, 0x28, 0xa0, 0xa1]), Buffer.from(`${head}"x":1${tail}`)])
    expect((await refused(`bad-${format}.json`, bad)).message).toMatch(/binary file/)
    expect(await parseReport(sourceFromBuffer(`ok-${format}.json`, `${head}"x":1${tail}`))).toMatchObject({ format })
  })
})

describe('bombs and invalid bytes', () => {
  it('billion laughs in NUnit and xUnit.net: the DOCTYPE is refused at its line', async () => {
    const dtd =
      '<?xml version="1.0"?>\n<!DOCTYPE test-run [\n <!ENTITY lol "lol">\n <!ENTITY lol2 "&lol;&lol;&lol;">\n]>\n'
    const e = await refused('laughs-nunit.xml', `${dtd}<test-run><test-case name="&lol2;"/></test-run>`)
    expect(e).toMatchObject({ line: 2 })
    expect(e.message).toMatch(/DOCTYPE declarations are not allowed/)
    const x = await refused('laughs-xunit.xml', dtd.replace('test-run', 'assemblies') + '<assemblies/>')
    expect(x).toMatchObject({ line: 2 })
  })

  it('invalid UTF-8 at the start is refused; later it is replaced, never fatal', async () => {
    const bad = Buffer.from([0xc3, 0x28, 0xa0, 0xa1])
    for (const [name, body] of [
      ['bad.json', goEvent('run', 'T')],
      ['bad.tap', 'TAP version 13\nok 1 - a\n'],
    ] as const) {
      expect((await refused(name, Buffer.concat([bad, Buffer.from(body)]))).message).toMatch(/binary file/)
    }
    const mid = Buffer.concat([
      Buffer.from(`TAP version 13\n${'pragma +strict\n'.repeat(200)}not ok 1 - caf`),
      Buffer.from([0xe9, 0xff]),
      Buffer.from('\n1..1\n'),
    ])
    const r = await parseReport(sourceFromBuffer('latin1.tap', mid))
    expect(r.cases[0]).toMatchObject({ name: 'caf\uFFFD\uFFFD', status: 'failed' })
  })

  it('malformed JSON in a line format: the line of the fault', async () => {
    const e = await refused('broken.json', `${goEvent('run', 'T')}\n{"Action":"pass","Package":"p",\n`)
    expect(e).toMatchObject({ line: 2 })
    expect(e.message).toMatch(/invalid JSON/)
  })

  it('a Go stream cut mid-test: the running test is an error, not lost', async () => {
    const r = await parseReport(
      sourceFromBuffer(
        'cut.json',
        `${goEvent('run', 'TestA')}\n${goEvent('output', 'TestA', ',"Output":"panic: boom\\n"')}\n`,
      ),
    )
    expect(r.cases[0]).toMatchObject({ name: 'TestA', status: 'error', message: 'panic: boom' })
  })
})
