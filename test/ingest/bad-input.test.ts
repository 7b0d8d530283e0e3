import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ReportParseError } from '../../src/errors.js'
import { FORMATS, parseReport, sourceFromBuffer, sourceFromFile, type Format } from '../../src/ingest/index.js'
import { chunkedSource } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'flakewatch-bad-input-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A secret the XXE input points at: it must never show up anywhere. */
const SECRET = 'flakewatch-xxe-secret-8c1f'
const secretFile = join(dir, 'secret.txt')
writeFileSync(secretFile, SECRET)

const suite = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n<testsuite name="s">\n${body}\n</testsuite>\n</testsuites>\n`

async function failure(name: string, content: string | Buffer, format?: Format): Promise<ReportParseError> {
  const path = join(dir, name)
  writeFileSync(path, content)
  const error: unknown = await parseReport(sourceFromFile(path), { format }).then(
    () => new Error(`${name} parsed without error`),
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ReportParseError)
  const e = error as ReportParseError
  expect(e.file).toBe(path)
  expect(e.code).toBe('FW_REPORT_PARSE')
  expect(e.message.startsWith(path)).toBe(true)
  return e
}

describe('bad input gives a ReportParseError naming the file (and the line, for XML and JSON)', () => {
  it('malformed XML', async () => {
    const e = await failure('malformed.xml', suite('<testcase name="a">\n<failure>boom</testcase>'))
    expect(e.line).toBe(5)
    expect(e.detail).toBe('malformed XML: unexpected close tag.')
  })

  it('truncated XML', async () => {
    const e = await failure('truncated.xml', suite('<testcase name="a"/>\n<testcase name="b">').slice(0, 120))
    expect(e.line).toBeGreaterThanOrEqual(4)
    expect(e.detail).toMatch(/^malformed XML: unclosed tag/)
  })

  it('an undefined entity (no DTD can define one)', async () => {
    const e = await failure('entity.xml', suite('<testcase name="&xxe;"/>'))
    expect(e.line).toBe(4)
    expect(e.detail).toBe('malformed XML: undefined entity.')
  })

  it('truncated JSON', async () => {
    const json = '{\n  "results": {\n    "tool": { "name": "x" },\n    "tests": [\n      { "name": "a", '
    const e = await failure('truncated.json', json)
    expect(e.line).toBe(5)
    expect(e.detail).toMatch(/^invalid JSON: /)
  })

  it('invalid JSON, located even when V8 gives no position', async () => {
    const json = '{\n  "numTotalTests": 1,\n  "testResults": [\n    { "name": tru }\n  ]\n}\n'
    const e = await failure('invalid.json', json)
    expect(e.line).toBe(4)
  })

  it('JSON of the wrong shape, with the paths at fault', async () => {
    const json = JSON.stringify({ numTotalTests: 1, testResults: [{ assertionResults: [{ title: 3 }] }] })
    const e = await failure('shape.json', json)
    expect(e.detail).toMatch(/^not a valid Jest JSON report: /)
    expect(e.detail).toMatch(/testResults\[0\]\.assertionResults\[0\]\.title: .*expected string/)
    expect(e.detail).toMatch(/testResults\[0\]\.assertionResults\[0\]\.status/)
  })

  it('a 0-byte file', async () => {
    const e = await failure('empty.xml', '')
    expect(e.detail).toBe('empty file')
    expect(e.line).toBeUndefined()
  })

  it('a binary file (NUL bytes, invalid UTF-8)', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52])
    expect((await failure('image.xml', png)).detail).toBe('binary file, not a test report')
    const latin1 = Buffer.concat([Buffer.from('<testsuites name="'), Buffer.from([0xe9, 0xe8]), Buffer.from('"/>')])
    expect((await failure('latin1.xml', latin1)).detail).toBe('binary file, not a test report')
  })

  it('an unknown format, with the formats to choose from', async () => {
    const e = await failure('unknown.json', '{"hello": "world"}')
    expect(e.detail).toBe(`unknown report format; use --format <${FORMATS.join('|')}>`)
    const html = await failure('unknown.xml', '<?xml version="1.0"?><html><body/></html>')
    expect(html.detail).toMatch(/^unknown report format/)
  })

  it('the wrong --format', async () => {
    const e = await failure('forced.json', '{"tests": {"a/b": true}}', 'junit')
    expect(e.line).toBe(1)
    expect(e.detail).toMatch(/^malformed XML: /)
  })

  it('billion laughs, in a JUnit file and in a file of unknown root', async () => {
    const entities = [' <!ENTITY lol "lol">']
    for (let i = 1; i < 10; i++) entities.push(` <!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`)
    const dtd = `<?xml version="1.0"?>\n<!DOCTYPE testsuites [\n${entities.join('\n')}\n]>\n`
    const e = await failure('laughs.xml', `${dtd}<testsuites><testsuite name="&lol9;"/></testsuites>\n`)
    expect(e.line).toBe(2)
    expect(e.detail).toBe('DOCTYPE declarations are not allowed in test reports (DTDs and entities are never resolved)')
    const lolz = dtd.replace('DOCTYPE testsuites', 'DOCTYPE lolz') + '<lolz>&lol9;</lolz>\n'
    const other = await failure('laughs-lolz.xml', lolz)
    expect(other.line).toBe(2)
    expect(other.detail).toMatch(/^DOCTYPE declarations are not allowed/)
  })

  it('an external entity (XXE): the referenced file is never read', async () => {
    for (const target of [`file://${secretFile}`, 'file:///etc/passwd']) {
      const dtd = `<?xml version="1.0"?>\n<!DOCTYPE testsuites [\n  <!ENTITY xxe SYSTEM "${target}">\n]>\n`
      const xml = dtd + suite('<testcase name="&xxe;"><failure message="&xxe;"/></testcase>')
      const e = await failure('xxe.xml', xml)
      expect(e.line).toBe(2)
      expect(e.message).not.toContain(SECRET)
      expect(e.message).not.toContain('root:')
    }
    // Forced past detection, the parser refuses it the same way.
    const forced = await failure('xxe-forced.xml', `<!DOCTYPE x SYSTEM "file://${secretFile}"><testsuites/>`, 'junit')
    expect(forced.line).toBe(1)
    expect(forced.message).not.toContain(SECRET)
  })

  it('a DOCTYPE split across input chunks is still caught at its line', async () => {
    const xml = `<?xml version="1.0"?>\n\n<!DOCTYPE testsuites [<!ENTITY a "b">]>\n<testsuites/>`
    for (const size of [1, 3, 7, 11]) {
      const error: unknown = await parseReport(chunkedSource('split.xml', xml, size)).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ReportParseError)
      expect(error).toMatchObject({ file: 'split.xml', line: 3 })
    }
  })

  it('a 1 MB attribute: a long message is kept truncated, a long name is refused', async () => {
    const big = 'x'.repeat(1024 * 1024)
    const path = join(dir, 'big-message.xml')
    writeFileSync(path, suite(`<testcase name="a"><failure message="${big}">body</failure></testcase>`))
    const report = await parseReport(sourceFromFile(path))
    const message = report.cases[0]!.message!
    expect(message.length).toBeLessThan(70 * 1024)
    expect(message).toMatch(/^x{65536}\n… \[truncated 983040 characters\]$/)
    const e = await failure('big-name.xml', suite(`<testcase name="${big}"/>`))
    expect(e.line).toBe(4)
    expect(e.detail).toBe('testcase name is 1048576 characters long (limit 16384)')
  })

  it('a name, module or file past 16,384 characters is refused in every JSON format (found by bench/fuzz.mjs)', async () => {
    const big = 'a'.repeat(70_000)
    const reports: [Format, string][] = [
      ['mocha-json', JSON.stringify({ stats: {}, tests: [{ title: 't', fullTitle: 't', file: big, err: {} }] })],
      [
        'rspec-json',
        JSON.stringify({
          version: '3',
          examples: [{ id: '1', description: 't', full_description: 't', status: 'passed', file_path: big }],
        }),
      ],
      [
        'ctrf',
        JSON.stringify({ results: { tool: { name: 'x' }, tests: [{ name: big, status: 'passed', duration: 1 }] } }),
      ],
      [
        'jest-json',
        JSON.stringify({ testResults: [{ name: 'a.test.js', assertionResults: [{ title: big, status: 'passed' }] }] }),
      ],
      ['simple-json', JSON.stringify({ tests: { [`m/${big}`]: true } })],
    ]
    for (const [format, text] of reports) {
      const e = await failure(`${format}.json`, text, format)
      expect(e.detail, format).toMatch(/^test (name|module|file) is 7\d{4} characters long \(limit 16384\)$/)
    }
  })

  it('10,000-deep nesting: a clean error, not a stack overflow', async () => {
    const deep = `<testsuites>\n${'<testsuite name="s">'.repeat(10_000)}${'</testsuite>'.repeat(10_000)}</testsuites>`
    const e = await failure('deep.xml', deep)
    expect(e.line).toBe(2)
    expect(e.detail).toBe('elements nested deeper than 256 levels')
    const json = `{"config": {"rootDir": "/"}, "suites": ${'['.repeat(10_000)}${']'.repeat(10_000)}}`
    expect((await failure('deep.json', json)).detail).toBe('JSON nested deeper than 256 levels')
  })
})

describe('tolerated imperfections', () => {
  it('a DOCTYPE inside captured output is text, not a declaration', async () => {
    const html = '<![CDATA[<!DOCTYPE html><html><body>page dump</body></html>]]>'
    const report = await parseReport(
      sourceFromBuffer('cdata.xml', suite(`<testcase name="a"><failure message="m">${html}</failure></testcase>`)),
    )
    expect(report.cases[0]!.stack).toBe('<!DOCTYPE html><html><body>page dump</body></html>')
  })

  it('raw control characters and ANSI colours in output are dropped, not fatal', async () => {
    const body = 'boom \u001b[31mred\u001b[39m &#x1B;[1mbold&#x1B;[22m \u0007bell'
    const xml = suite(`<testcase name="a"><failure>${body}</failure></testcase>`)
    const report = await parseReport(sourceFromBuffer('ansi.xml', xml))
    expect(report.cases[0]!.stack).toBe('boom red bold \u0007bell')
  })

  it('UTF-8 BOM, UTF-16 with BOM, leading whitespace before the declaration', async () => {
    const xml = suite('<testcase name="a"/>')
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`\n  \n${xml}`)])
    expect((await parseReport(sourceFromBuffer('bom.xml', bom))).cases).toHaveLength(1)
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml.replace('UTF-8', 'UTF-16'), 'utf16le')])
    expect((await parseReport(sourceFromBuffer('utf16.xml', utf16))).cases[0]!.name).toBe('a')
  })
})
