/**
 * The heatmap's run axis: which columns get a label, and what it says. Every `every`-th column is labelled,
 * counted from the newest so that the newest run always is. A label is the run's UTC day (`MM-DD`) where the day
 * differs from the previous label's, else its time (`HH:MM`), so that runs of one day read apart; when even the
 * minute repeats, `#n`, the run's place among that day's runs.
 * @example axisLabels([{ at: '2026-11-27T09:00:00Z' }, { at: '2026-11-27T15:30:00Z' }], 1) // 0 → '11-27', 1 → '15:30'
 */
export function axisLabels(runs: readonly { at: string }[], every: number): Map<number, string> {
  const step = Math.max(1, Math.floor(every))
  const out = new Map<number, string>()
  let prevDay = ''
  let prevText = ''
  let day = ''
  let nth = 0
  for (let c = 0; c < runs.length; c++) {
    const at = runs[c]!.at
    const d = at.slice(0, 10)
    nth = d === day ? nth + 1 : 1
    day = d
    if ((runs.length - 1 - c) % step !== 0) continue
    let text = d.slice(5)
    if (d === prevDay) {
      const time = at.slice(11, 16)
      text = time !== prevText && time.length === 5 ? time : `#${nth}`
    }
    out.set(c, text)
    prevDay = d
    prevText = text
  }
  return out
}
