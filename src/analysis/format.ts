/** Small formatting helpers shared by the human-readable reasons and hints. */

export function day(at: number): string {
  return Number.isFinite(at) ? new Date(at).toISOString().slice(0, 10) : '?'
}

export function shortRev(revision: string | null): string {
  return revision === null ? 'unknown' : revision.length > 10 ? revision.slice(0, 10) : revision
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

export function fixed2(x: number): string {
  return x.toFixed(2)
}

/** A p-value for a hint's text: two significant digits, or `p < 0.0001`. */
export function pValueText(p: number): string {
  return p < 1e-4 ? 'p < 0.0001' : `p = ${p.toPrecision(2)}`
}
