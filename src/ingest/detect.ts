import type { Format } from './index.js'

/** How much of a file detection looks at. */
export const DETECT_HEAD_CHARS = 16 * 1024

/**
 * JSON formats by the keys their writers put near the top. Checked in order; the first match wins.
 * Key order is the writers': Jest sorts its keys (`numFailedTestSuites` first), Playwright writes `config` first.
 */
const JSON_SIGNATURES: [Format, RegExp[]][] = [
  // Line formats: the first event decides. test2json writes Time first (Action first with -t off); Bazel `id`.
  ['go-json', [/^\{\s*(?:"Time"\s*:\s*"[^"]*"\s*,\s*)?"Action"\s*:\s*"[a-z]+"/]],
  ['bazel-bep', [/^\{\s*"id"\s*:\s*\{\s*"[A-Za-z]+"\s*:/, /"(?:children|started|progress|lastMessage)"\s*:/]],
  // Cucumber's message stream opens with its meta envelope (or, cut down, with the sources it parsed).
  ['cucumber-messages', [/^\{\s*"(?:meta|source|gherkinDocument|pickle)"\s*:\s*\{/, /"(?:protocolVersion|uri)"\s*:/]],
  ['ctrf', [/"reportFormat"\s*:\s*"CTRF"/]],
  ['ctrf', [/"results"\s*:\s*\{/, /"tool"\s*:\s*\{/]],
  ['jest-json', [/"num(?:Total|Failed|Passed|Pending)Test(?:s|Suites)"\s*:/]],
  ['jest-json', [/"testResults"\s*:\s*\[/, /"(?:assertionResults|testFilePath)"\s*:/]],
  ['playwright-json', [/"config"\s*:\s*\{/, /"(?:configFile|rootDir|projects)"\s*:/]],
  ['playwright-json', [/"suites"\s*:\s*\[/, /"specs"\s*:\s*\[/]],
  // mochawesome before mocha: both open with mocha's stats; mochawesome adds its percentages and `results`.
  ['mochawesome', [/"stats"\s*:\s*\{/, /"(?:passPercent|pendingPercent|hasSkipped)"\s*:/]],
  ['mocha-json', [/"stats"\s*:\s*\{/, /"tests"\s*:\s*\[/, /"fullTitle"\s*:|"passes"\s*:\s*\d/]],
  ['rspec-json', [/^\{\s*"version"\s*:\s*"\d+\.\d+\.\d+"\s*,\s*"(?:seed|messages|examples)"\s*:/]],
  ['rspec-json', [/"examples"\s*:\s*\[/, /"full_description"\s*:/]],
  // pytest-json-report: the session's exit code and root near the top, whatever the key order.
  ['pytest-json', [/"exitcode"\s*:\s*-?\d+/, /"root"\s*:\s*"/, /"(?:created|collectors|summary|tests)"\s*:/]],
  ['simple-json', [/"tests"\s*:\s*\{\s*(?:\}|"(?:[^"\\]|\\.)*"\s*:\s*(?:true|false))/]],
  ['simple-json', [/"metadata"\s*:\s*\{/, /"(?:pipeline|job)_(?:id|status)"\s*:/, /"tests"\s*:\s*\{/]],
]

const XML_ROOTS: Record<string, Format> = {
  testsuites: 'junit',
  testsuite: 'junit',
  TestRun: 'trx',
  'test-run': 'nunit',
  'test-results': 'nunit',
  // The NUnit 3 adapter writes one <test-suite type="Assembly"> per assembly.
  'test-suite': 'nunit',
  assemblies: 'xunit',
  assembly: 'xunit',
}

/** TAP: a version line, a plan, a first test point or a node-style subtest comment. */
const TAP_START = /^(?:TAP version 1[34]\b|1\.\.\d+|(?:not )?ok\b|# Subtest: )/

/**
 * Tells a report's format from its first few KB (see {@link DETECT_HEAD_CHARS}), never from its extension:
 * CI artefacts are often named `results.xml` or `report.json` whatever wrote them. Tolerates a UTF-8 BOM,
 * leading whitespace, a missing XML declaration, comments and processing instructions before the root.
 * `name` only breaks a tie the content cannot: an XML file whose root lies beyond the head.
 * @example detectFormat('<?xml version="1.0"?><testsuites>', 'junit.xml') // 'junit'
 */
export function detectFormat(head: string, name: string): Format | null {
  const text = head.replace(/^\uFEFF/, '').trimStart()
  if (TAP_START.test(text)) return 'tap'
  if (text.startsWith('<')) return xmlRoot(text) ?? (/\.trx$/i.test(name) ? 'trx' : null)
  // Cucumber JSON is the one array: features, each with its scenarios as `elements`.
  if (/^\[\s*\{/.test(text) && /"elements"\s*:\s*\[/.test(text) && /"(?:uri|keyword)"\s*:/.test(text)) {
    return 'cucumber-json'
  }
  if (text.startsWith('{')) {
    for (const [format, patterns] of JSON_SIGNATURES) if (patterns.every((p) => p.test(text))) return format
  }
  return null
}

/** The root element's name, skipping the prolog; a DOCTYPE names the root too. */
function xmlRoot(text: string): Format | null {
  let i = 0
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++
    if (text.startsWith('<?', i)) i = skipPast(text, i, '?>')
    else if (text.startsWith('<!--', i)) i = skipPast(text, i, '-->')
    else if (text.startsWith('<!DOCTYPE', i)) return rootFormat(/^<!DOCTYPE\s+([^\s>[]+)/.exec(text.slice(i))?.[1])
    else if (text[i] === '<') return rootFormat(/^<([^\s/>]+)/.exec(text.slice(i, i + 200))?.[1])
    else return null
    if (i < 0) return null
  }
}

function skipPast(text: string, from: number, end: string): number {
  const at = text.indexOf(end, from)
  return at < 0 ? -1 : at + end.length
}

function rootFormat(tag: string | undefined): Format | null {
  if (!tag) return null
  const local = tag.slice(tag.indexOf(':') + 1)
  return XML_ROOTS[local] ?? null
}
