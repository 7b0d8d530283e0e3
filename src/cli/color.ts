import type { VerdictKind } from '../model.js'
import { VERDICT_LABEL } from '../test-story.js'

/** A verdict from its machine value or its human word: tables show the word. */
const VERDICT_OF_LABEL = new Map(Object.entries(VERDICT_LABEL).map(([kind, label]) => [label, kind]))

/** The streams and environment colour is decided from (the command's `Io`). */
export interface ColorTarget {
  stream: { isTTY?: boolean }
  env: NodeJS.ProcessEnv
}

/**
 * Whether to colour what goes to `stream`, the way Node and the npm ecosystem (supports-color, chalk) decide it:
 *
 * 1. `FORCE_COLOR` set: `0` or `false` turns colour off, any other value (`1`, `2`, `3`, `true`, empty) turns it on
 *    even into a pipe or a CI log. It wins over `NO_COLOR`, as in Node.
 * 2. `NO_COLOR` set and not empty (https://no-color.org): off.
 * 3. `TERM=dumb`: off.
 * 4. Otherwise on for a terminal only.
 * @example colorEnabled({ stream: process.stdout, env: process.env })
 */
export function colorEnabled(t: ColorTarget): boolean {
  const force = t.env.FORCE_COLOR
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false'
  if (t.env.NO_COLOR !== undefined && t.env.NO_COLOR !== '') return false
  if (t.env.TERM === 'dumb') return false
  return Boolean(t.stream.isTTY)
}

/** SGR codes, opened and closed on their own so that a coloured cell never bleeds into the next. */
const SGR = {
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  gray: [90, 39],
  bold: [1, 22],
} as const

export type Style = keyof typeof SGR

/** Text styled with ANSI colour codes, or as it is when colour is off. */
export type Painter = (style: Style, text: string) => string

/** @example const paint = createPainter(true); paint('red', 'broken') */
export function createPainter(enabled: boolean): Painter {
  if (!enabled) return (_style, text) => text
  return (style, text) => `\u001b[${SGR[style][0]}m${text}\u001b[${SGR[style][1]}m`
}

/**
 * The colour of each verdict, as test runners show results: red for what fails every time, yellow for what
 * fails sometimes (a warning, as Jest and Vitest show flaky and retried tests), green for healthy, gray for no
 * verdict yet.
 */
export const VERDICT_STYLE: Record<VerdictKind, Style> = {
  broken: 'red',
  flaky: 'yellow',
  healthy: 'green',
  insufficient_data: 'gray',
}

/** The history strip's characters: ✗ red, ↻ yellow, ✓ green, · gray. */
export function paintStrip(paint: Painter, strip: string): string {
  let out = ''
  for (const ch of strip) {
    out +=
      ch === '✗'
        ? paint('red', ch)
        : ch === '↻'
          ? paint('yellow', ch)
          : ch === '✓'
            ? paint('green', ch)
            : paint('gray', ch)
  }
  return out
}

/** A verdict word in its colour (any other text is left as it is). */
export function paintVerdict(paint: Painter, text: string): string {
  const style = VERDICT_STYLE[(VERDICT_OF_LABEL.get(text) ?? text) as VerdictKind]
  return style ? paint(style, text) : text
}
