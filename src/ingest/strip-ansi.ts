/** CSI sequences (colours, cursor moves), OSC sequences (hyperlinks) and stray ESC bytes, as runners emit them. */
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u009b[0-?]*[ -/]*[@-~]|\u001b/g

/**
 * Removes ANSI escape sequences, so that messages compare and display the same whatever the runner's colour mode.
 * @example stripAnsi('\u001b[31mTest timeout\u001b[39m') // 'Test timeout'
 */
export function stripAnsi(text: string): string {
  return text.includes('\u001b') || text.includes('\u009b') ? text.replace(ANSI, '') : text
}
