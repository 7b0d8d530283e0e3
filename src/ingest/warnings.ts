/**
 * What ingest did not trust in one report and replaced (a run time in the future, a duration of `0x10`), as
 * readable lines for the `--json` entry and the HTTP response. Counted per kind with the first example, so that a
 * million bad durations give one line, not a million.
 * @example const w = new IngestWarnings(); w.add('duration', 'NaN'); w.list() // ['1 duration …']
 */
export class IngestWarnings {
  private readonly kinds = new Map<
    string,
    { count: number; first: string; text: (n: number, first: string) => string }
  >()

  add(kind: string, first: string, text: (count: number, first: string) => string): void {
    const k = this.kinds.get(kind)
    if (k) k.count++
    else this.kinds.set(kind, { count: 1, first, text })
  }

  /** A warning the parser already worded (one per report, such as a CTRF file that is not schema-valid). */
  note(text: string): void {
    this.add(`note:${text}`, text, (_n, first) => first)
  }

  list(): string[] {
    return [...this.kinds.values()].map((k) => k.text(k.count, k.first))
  }
}
