import { ReportLimitError, ReportParseError } from '../errors.js'
import { MAX_OPEN_TESTS, MAX_TAP_DEPTH, MAX_TEXT } from '../limits.js'
import type { ResultStatus } from '../model.js'
import { BoundedText, checkedName, ownString, truncateText } from './bounded-text.js'
import { chunkCases, collectReport } from './collect.js'
import { sourceLines } from './line-stream.js'
import { stripAnsi } from './strip-ansi.js'
import type { ParsedCase, ParsedReport, ParsedStream, ParseOptions, ReportRunMeta, ReportSource } from './types.js'

/*
 * TAP 13 and 14 (testanything.org): `ok`/`not ok` test points, `# SKIP`/`# TODO` directives, YAML diagnostics
 * between `---` and `...`, and subtests indented four spaces under their parent's point (`node --test`, TAP 14).
 * tape writes no subtests: each test is a `# name` comment followed by its assertions' points.
 */
const POINT = /^(not )?ok\b\s*(\d+)?\s*(?:-\s*)?(.*)$/
const DIRECTIVE = /\s#\s*(SKIP|TODO)\b\S*\s*(.*)$/i
/** tape's closing counts, and node's: not test names. */
const SUMMARY = /^(?:tests|pass|fail|ok|skip|todo|suites|cancelled|duration_ms)\b/

interface PointCase {
  /** The titles above the point's own, innermost first, filled in as the parents' points arrive. */
  path: string[]
  name: string
  status: ResultStatus
  durationMs: number | null
  diagnostics: Record<string, string>
  line: number
}

interface Level {
  /** Finished points of this level that are cases, waiting for the parent's point to name their path. */
  cases: PointCase[]
  failed: boolean
  /** This level had a point (so its parent's point is a container, not a test). */
  any: boolean
}

interface TapeGroup {
  name: string
  failed: boolean
  points: number
  skipped: number
  diagnostics: Record<string, string>
  line: number
}

/**
 * Parses a TAP stream whole.
 * @example const report = await parseTap(sourceFromFile('node-test.tap'))
 */
export function parseTap(source: ReportSource, opts: ParseOptions = {}): Promise<ParsedReport> {
  return collectReport(streamTap(source, opts))
}

/**
 * Streams TAP line by line. A point with subtests is a suite, not a test (unless it failed on its own); a test's
 * module is the titles of the points above it joined with ` › ` and its name is its own title, as node's JUnit
 * reporter names the same tests (one id whichever of the two is ingested). TAP names no file for a passing test,
 * so the file is not part of the id; node's `location` fills `file` where given. tape's `# name` groups are the
 * tests and their assertions' points their parts. `Bail out!` marks the run interrupted.
 * @example for await (const chunk of streamTap(sourceFromFile('out.tap')).cases) console.log(chunk.length)
 */
export function streamTap(source: ReportSource, _opts: ParseOptions = {}): ParsedStream {
  const meta: ReportRunMeta = {}
  const out: ParsedCase[] = []
  return { format: 'tap', meta, cases: chunkCases(tapSteps(source, meta, out), out) }
}

async function* tapSteps(source: ReportSource, meta: ReportRunMeta, out: ParsedCase[]): AsyncGenerator<void> {
  const file = source.name
  const levels: Level[] = [{ cases: [], failed: false, any: false }]
  let waiting = 0
  // The point whose YAML block may follow, and the block being read.
  let last: { diagnostics: Record<string, string>; indent: number } | null = null
  let yaml: { lines: BoundedText; indent: number; into: Record<string, string> } | null = null
  let tape: TapeGroup | null = null
  let pendingComment: { name: string; line: number } | null = null

  const emit = (c: PointCase) => out.push(toCase(c))
  const closeTape = () => {
    if (tape && tape.points > 0) out.push(tapeCase(tape))
    tape = null
  }

  for await (const batch of sourceLines(source)) {
    for (const { text: raw, number } of batch) {
      const indent = /^ */.exec(raw)![0].length
      const text = raw.slice(indent)
      if (yaml) {
        if (text === '...' && indent <= yaml.indent + 2) {
          Object.assign(yaml.into, readYaml(yaml.lines.value()))
          yaml = null
        } else {
          yaml.lines.push(raw.slice(Math.min(indent, yaml.indent + 2)) + '\n')
        }
        continue
      }
      if (text === '---' && last && indent >= last.indent) {
        yaml = { lines: new BoundedText(MAX_TEXT), indent: last.indent, into: last.diagnostics }
        continue
      }
      const depth = Math.floor(indent / 4)
      if (depth >= MAX_TAP_DEPTH) {
        throw new ReportParseError(file, number, `subtests nested deeper than ${MAX_TAP_DEPTH} levels`)
      }
      if (text.startsWith('Bail out!')) {
        meta.status = 'interrupted'
        continue
      }
      const point = POINT.exec(text)
      if (!point) {
        // tape: a `# name` comment right before points names the test they belong to.
        if (depth === 0 && /^# \S/.test(text) && !text.startsWith('# Subtest') && !SUMMARY.test(text.slice(2))) {
          pendingComment = { name: text.slice(2), line: number }
        } else if (text !== '') pendingComment = null
        last = null
        continue
      }
      while (levels.length < depth + 1) levels.push({ cases: [], failed: false, any: false })
      const [, not, , rest] = point
      const directive = DIRECTIVE.exec(rest!)
      const title = checkedName(file, number, 'test name', directive ? rest!.slice(0, directive.index) : rest)
      let status: ResultStatus = not ? 'failed' : 'passed'
      const kind = directive?.[1]!.toUpperCase()
      if (kind === 'SKIP' || kind === 'TODO') status = 'skipped'
      const diagnostics: Record<string, string> = {}
      if (directive?.[2]) diagnostics.reason = directive[2]
      last = { diagnostics, indent }

      if (depth === 0 && pendingComment) {
        closeTape()
        tape = {
          name: checkedName(file, pendingComment.line, 'test name', pendingComment.name),
          failed: false,
          points: 0,
          skipped: 0,
          diagnostics: {},
          line: pendingComment.line,
        }
        pendingComment = null
      }
      if (depth === 0 && tape && levels.length === 1) {
        tape.points++
        if (status === 'failed' && !tape.failed) {
          tape.failed = true
          tape.diagnostics = diagnostics
          diagnostics.assertion = title
        }
        if (status === 'skipped') tape.skipped++
        continue
      }

      const children = levels[depth + 1]
      const own: PointCase = { path: [], name: title, status, durationMs: null, diagnostics, line: number }
      const level = levels[depth]!
      level.any = true
      if (children?.any) {
        // A suite: its children get its title; it is a test itself only if it failed with no failing child.
        for (const c of children.cases) {
          c.path.push(title)
          level.cases.push(c)
        }
        children.cases = []
        if (status === 'failed' && !children.failed) level.cases.push(own)
        if (children.failed || status === 'failed') level.failed = true
        levels.length = depth + 1
      } else {
        level.cases.push(own)
        waiting++
        if (status === 'failed') level.failed = true
      }
      if (waiting > MAX_OPEN_TESTS) {
        throw new ReportLimitError(
          file,
          `line ${number}: subtests waiting for their parent's line`,
          MAX_OPEN_TESTS,
          undefined,
        )
      }
      if (depth === 0) {
        for (const c of level.cases) emit(c)
        waiting -= level.cases.length
        level.cases = []
        if (waiting < 0) waiting = 0
      }
    }
    yield
  }
  closeTape()
  // Subtests whose parent's point never came (a cut stream): they are known by their own titles only.
  for (let d = levels.length - 1; d >= 0; d--) for (const c of levels[d]!.cases) emit(c)
}

function toCase(c: PointCase): ParsedCase {
  const d = c.diagnostics
  const module = c.path.reverse().join(' › ')
  const failed = c.status === 'failed'
  const message = failed ? text(d.error ?? d.message ?? d.reason) : c.status === 'skipped' ? text(d.reason) : null
  const stack = failed ? text(d.stack ?? d.at) : null
  const duration = Number(d.duration_ms)
  return {
    module: ownString(module),
    name: c.name,
    file: fileOf(d.location),
    status: c.status,
    flakyOnRetry: false,
    durationMs: d.duration_ms !== undefined && Number.isFinite(duration) ? duration : null,
    errorType: failed ? errorTypeOf(d.failureType) : null,
    message,
    stack,
    healingOccurred: false,
    attempts: [],
  }
}

function tapeCase(g: TapeGroup): ParsedCase {
  const d = g.diagnostics
  const status: ResultStatus = g.failed ? 'failed' : g.skipped === g.points ? 'skipped' : 'passed'
  const what = [d.assertion, d.operator ? `(${d.operator})` : null].filter(Boolean).join(' ')
  const detail =
    d.expected !== undefined || d.actual !== undefined
      ? `expected: ${d.expected ?? ''}\nactual: ${d.actual ?? ''}`
      : null
  return {
    module: '',
    name: g.name,
    file: null,
    status,
    flakyOnRetry: false,
    durationMs: null,
    errorType: null,
    message: g.failed ? text(what) : null,
    stack: g.failed ? text([detail, d.at, d.stack].filter(Boolean).join('\n')) : null,
    healingOccurred: false,
    attempts: [],
  }
}

function text(value: string | undefined): string | null {
  if (value === undefined) return null
  const t = stripAnsi(value).trim()
  return t === '' ? null : ownString(truncateText(t))
}

function errorTypeOf(failureType: string | undefined): string | null {
  if (!failureType) return null
  return failureType === 'testTimeoutFailure' ? 'timeout' : ownString(failureType)
}

/** node's `location: '/path/file.test.mjs:5:3'`: the file, without line and column. */
function fileOf(location: string | undefined): string | null {
  if (!location) return null
  const m = /^(.*?):\d+(?::\d+)?$/.exec(location.trim())
  return m ? ownString(m[1]!.replace(/^file:\/\//, '')) : null
}

/**
 * The top-level scalars of a TAP YAML block: `key: value` with plain, single- or double-quoted values and `|`/`>`
 * block scalars. Nested maps and lists are skipped; nothing here needs them.
 */
export function readYaml(block: string): Record<string, string> {
  const out: Record<string, string> = {}
  let lines = block.split('\n')
  // tape indents its blocks by four, node by two: keys are what sits at the block's own indentation.
  let indent = Infinity
  for (const l of lines) if (l.trim() !== '') indent = Math.min(indent, /^ */.exec(l)![0].length)
  if (indent > 0 && indent < Infinity) lines = lines.map((l) => l.slice(indent))
  for (let i = 0; i < lines.length; i++) {
    const m = /^([A-Za-z_][\w.-]*):(?:\s+(.*))?$/.exec(lines[i]!)
    if (!m) continue
    const key = m[1]!
    const value = (m[2] ?? '').trim()
    if (/^[|>][-+]?\d*$/.test(value)) {
      const body: string[] = []
      let indent = -1
      while (i + 1 < lines.length && (lines[i + 1]!.trim() === '' || /^\s/.test(lines[i + 1]!))) {
        const next = lines[++i]!
        if (next.trim() !== '' && indent < 0) indent = /^\s*/.exec(next)![0].length
        body.push(next.slice(Math.max(indent, 0)))
      }
      out[key] = value.startsWith('>') ? body.join(' ').replace(/\s+/g, ' ') : body.join('\n').replace(/\n+$/, '')
    } else if (value.startsWith("'") && value.endsWith("'") && value.length >= 2) {
      out[key] = value.slice(1, -1).replace(/''/g, "'")
    } else if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) {
      try {
        out[key] = JSON.parse(value) as string
      } catch {
        out[key] = value.slice(1, -1)
      }
    } else if (value !== '') {
      out[key] = value
    }
  }
  return out
}
