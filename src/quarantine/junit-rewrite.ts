import { createWriteStream, type WriteStream } from 'node:fs'
import { once } from 'node:events'
import type { SaxesTagPlain } from 'saxes'
import { sourceFromFile } from '../ingest/source.js'
import { xmlSteps, type XmlHandlers } from '../ingest/xml-stream.js'
import { escapeXml } from './junit-out.js'

/** One JUnit report of the job, and what the gate forgave in it, case by case. */
export interface JunitInput {
  file: string
  /** `<testcase>` elements the parser read (a nested one is not a case of its own). */
  cases: number
  /**
   * Why the `index`th `<testcase>` (document order) is shown as skipped, when its failure is forgiven: the
   * `<skipped message>`, before the original message.
   */
  noteOf(index: number): string | undefined
}

const SUITE = new Set(['testsuites', 'testsuite'])
const FAILING = new Set(['failure', 'error'])

interface Delta {
  failures: number
  errors: number
  skipped: number
}

/**
 * Writes the job's JUnit reports back out with only the quarantined failures changed: each of their `<failure>`
 * and `<error>` elements becomes a `<skipped>` whose message names the quarantine, and whose body keeps the
 * failure's (stack, output). Everything else (attributes, `<system-out>` with `[[ATTACHMENT|…]]` lines,
 * `<properties>`, Surefire's `<flakyFailure>`/`<rerunFailure>`, other tests) is copied, and the suites' failure,
 * error and skipped counts follow. Several reports go under one `<testsuites>`.
 * Two streaming passes per report (counts first, since a suite's counts come before its cases), so memory stays
 * flat whatever the size.
 * @example await rewriteJunit([{ file: 'junit.xml', cases: 3, noteOf: (i) => (i === 1 ? 'quarantined: …' : undefined) }], 'gated.xml')
 */
export async function rewriteJunit(inputs: JunitInput[], outFile: string): Promise<void> {
  const out = createWriteStream(outFile, { encoding: 'utf8' })
  const closed = once(out, 'close')
  try {
    const wrap = inputs.length !== 1
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    if (wrap) out.write('<testsuites name="flakewatch gate">\n')
    for (const input of inputs) {
      const deltas = await suiteDeltas(input)
      await copyReport(input, deltas, wrap, out)
    }
    if (wrap) out.write('\n</testsuites>\n')
    else out.write('\n')
  } finally {
    out.end()
  }
  await closed
}

/** Walks the testcases as the JUnit parser does: a `<testcase>` inside another one is not a case of its own. */
function caseWalker(input: JunitInput) {
  let index = 0
  let caseDepth = -1
  let note: string | undefined
  return {
    /** On an opening tag: whether it starts a case, and the case's skip note when it is quarantined. */
    open(name: string, depth: number, file: string): void {
      if (caseDepth < 0 && name === 'testcase') {
        if (index >= input.cases) throw new Error(`${file}: more <testcase> elements than the parser read`)
        caseDepth = depth
        note = input.noteOf(index++)
      }
    },
    close(depth: number): boolean {
      if (depth !== caseDepth) return false
      caseDepth = -1
      note = undefined
      return true
    },
    /** The note when this element is a failing outcome directly inside a quarantined case. */
    forgivenOutcome(name: string, depth: number): string | undefined {
      return note !== undefined && depth === caseDepth + 1 && FAILING.has(name) ? note : undefined
    },
    get inForgivenCase() {
      return note !== undefined && caseDepth >= 0
    },
    get caseDepth() {
      return caseDepth
    },
  }
}

/** First pass: by how much each suite element's counts change, by the suites' opening order. */
async function suiteDeltas(input: JunitInput): Promise<Delta[]> {
  const deltas: Delta[] = []
  const open: number[] = []
  const walker = caseWalker(input)
  let failed = false
  let errored = false
  await drain(
    xmlSteps(sourceFromFile(input.file), () => ({
      open(tag: SaxesTagPlain, depth: number) {
        if (SUITE.has(tag.name) && !walker.inForgivenCase) {
          open.push(deltas.length)
          deltas.push({ failures: 0, errors: 0, skipped: 0 })
        }
        walker.open(tag.name, depth, input.file)
        if (walker.forgivenOutcome(tag.name, depth) !== undefined) {
          if (tag.name === 'failure') failed = true
          else errored = true
        }
      },
      close(name: string, depth: number) {
        const forgiven = walker.inForgivenCase
        if (walker.close(depth)) {
          if (forgiven && (failed || errored)) {
            // A case counts once: as a failure when it has one, else as an error.
            for (const i of open) {
              const d = deltas[i]!
              if (failed) d.failures--
              else d.errors--
              d.skipped++
            }
          }
          failed = errored = false
        } else if (SUITE.has(name) && !walker.inForgivenCase) open.pop()
      },
      text() {},
    })),
  )
  return deltas
}

/**
 * Retry records that Surefire's schema places before `<skipped>`: a skipped element written in a failure's place
 * waits until they have passed.
 */
const BEFORE_SKIPPED = new Set(['rerunFailure', 'flakyFailure'])

/** A quarantined failure's body is copied into its `<skipped>` up to this size. */
export const MAX_SKIPPED_BODY = 1024 * 1024

/** Second pass: copies the report, element by element, with the quarantined outcomes and the counts changed. */
async function copyReport(input: JunitInput, deltas: Delta[], wrapped: boolean, out: WriteStream): Promise<void> {
  const walker = caseWalker(input)
  let buffer = ''
  let suiteIndex = 0
  // Per open element: its name as written, or null when nothing is written for it (a self-closing tag, a
  // dropped root, a failure turned into the pending <skipped>).
  const stack: (string | null)[] = []
  // One <skipped> per case stands for all of its failures (Surefire allows one), written where the schema wants it.
  let pending: { message: string; body: string } | null = null
  let outcomeDepth = -1
  const flush = () => {
    if (!pending) return
    const body = pending.body.length > MAX_SKIPPED_BODY ? `${pending.body.slice(0, MAX_SKIPPED_BODY)}\n…` : pending.body
    buffer += `<skipped message="${escapeXml(pending.message)}">${escapeXml(body)}</skipped>`
    pending = null
  }
  const handlers = (ctx: { captureText(on: boolean): void }): XmlHandlers => {
    let capturing = false
    return {
      open(tag: SaxesTagPlain, depth: number) {
        // Every text is copied; the stream can only start passing it on once the parser is running.
        if (!capturing) ctx.captureText((capturing = true))
        const name = tag.name
        const attrs: Record<string, string> = { ...tag.attributes }
        const isSuite = SUITE.has(name) && !walker.inForgivenCase
        walker.open(name, depth, input.file)
        const note = walker.forgivenOutcome(name, depth)
        if (note !== undefined) {
          const original = attrs.message ? `; ${name}: ${attrs.message}` : ''
          if (pending) pending.body += '\n'
          else pending = { message: `${note}${original}`, body: '' }
          outcomeDepth = depth
          stack.push(null)
          return
        }
        if (pending && depth === walker.caseDepth + 1 && !BEFORE_SKIPPED.has(name)) flush()
        if (isSuite) {
          const d = deltas[suiteIndex++]
          if (d && d.skipped > 0) adjustCounts(attrs, d)
        }
        if (outcomeDepth >= 0 || (wrapped && depth === 1 && name === 'testsuites')) {
          stack.push(null)
          return
        }
        const text = Object.entries(attrs)
          .map(([k, v]) => ` ${k}="${escapeXml(v)}"`)
          .join('')
        if (tag.isSelfClosing) {
          buffer += `<${name}${text}/>`
          stack.push(null)
        } else {
          buffer += `<${name}${text}>`
          stack.push(name)
        }
      },
      close(_name: string, depth: number) {
        if (depth === outcomeDepth) outcomeDepth = -1
        if (depth === walker.caseDepth) flush()
        walker.close(depth)
        const name = stack.pop()
        if (name) buffer += `</${name}>`
      },
      text(text: string) {
        if (outcomeDepth >= 0) {
          if (pending && pending.body.length <= MAX_SKIPPED_BODY) pending.body += text
        } else if (stack.length > 0 && !(wrapped && stack.length === 1 && stack[0] === null && text.trim() === '')) {
          // Whitespace between a dropped root and its children is all that stands outside any written element.
          buffer += escapeXml(text)
        }
      },
    }
  }
  for await (const _ of xmlSteps(sourceFromFile(input.file), handlers)) {
    if (buffer.length > 0) {
      if (!out.write(buffer)) await once(out, 'drain')
      buffer = ''
    }
  }
  if (buffer.length > 0 && !out.write(buffer)) await once(out, 'drain')
}

function adjustCounts(attrs: Record<string, string>, d: Delta): void {
  const shift = (key: keyof Delta) => {
    const n = Number(attrs[key])
    if (attrs[key] !== undefined && Number.isInteger(n)) attrs[key] = String(Math.max(0, n + d[key]))
  }
  // Only the counts the report states: an attribute its dialect does not have would break its schema.
  shift('failures')
  shift('errors')
  shift('skipped')
}

async function drain(steps: AsyncGenerator<void, void, undefined>): Promise<void> {
  for await (const _ of steps) continue
}
