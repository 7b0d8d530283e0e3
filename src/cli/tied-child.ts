import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process'

/**
 * A command started so that it cannot outlive flakewatch, even when flakewatch is killed with SIGKILL (which no
 * handler sees) or crashes. Node has no `prctl(PR_SET_PDEATHSIG)`, so the command runs under a small Node wrapper
 * that holds the read end of a pipe whose only write end is flakewatch's: when flakewatch dies, for whatever
 * reason, the kernel closes that end, the wrapper reads EOF and kills the command.
 *
 * Without a terminal on stdin (CI), the wrapper leads a process group of its own, and EOF kills that whole group:
 * the command and whatever it started (npm → node → jest workers). On a terminal the wrapper stays in the
 * shell's foreground group, so that the command can still read the keyboard and Ctrl-C reaches it; there, EOF
 * kills the command itself.
 *
 * The wrapper passes on the command's exit code, and its signal by re-raising it; it passes signals flakewatch
 * forwards on to the command, and says `cannot start` with exit 127 when the command does not exist.
 */
const WRAPPER = `
const { spawn } = require('node:child_process')
const { Socket } = require('node:net')
const { constants } = require('node:os')
const [argv, mode, nodeOptions] = process.argv.slice(1).map((a) => JSON.parse(a))
if (nodeOptions === null) delete process.env.NODE_OPTIONS
else process.env.NODE_OPTIONS = nodeOptions
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP']
let finished = false
const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit' })
for (const s of FORWARDED) process.on(s, () => child.kill(s))
const orphaned = () => {
  if (finished) return
  finished = true
  try {
    if (mode === 'group') process.kill(-process.pid, 'SIGKILL')
    else child.kill('SIGKILL')
  } catch {}
  process.exit(137)
}
const parent = new Socket({ fd: 3, readable: true, writable: false })
parent.on('data', () => {})
parent.on('close', orphaned)
parent.on('end', orphaned)
parent.on('error', orphaned)
child.on('error', (e) => {
  finished = true
  process.stderr.write('flakewatch run: cannot start ' + argv[0] + ': ' + e.message + '\\n')
  process.exit(127)
})
child.on('exit', (code, signal) => {
  if (finished) return
  finished = true
  parent.destroy()
  if (!signal) process.exit(code ?? 1)
  for (const s of FORWARDED) process.removeAllListeners(s)
  try { process.kill(process.pid, signal) } catch {}
  process.exit(128 + (constants.signals[signal] ?? 1))
})
`

/**
 * Starts `argv` tied to this process's life (see above). On Windows, where there is no SIGKILL to survive and no
 * process groups, it is a plain spawn. A signal sent to the returned process reaches the command.
 * @example const child = spawnTied(['npm', 'test'], { stdio: 'inherit', env: process.env })
 */
export function spawnTied(argv: string[], opts: { stdio: StdioOptions; env: NodeJS.ProcessEnv }): ChildProcess {
  if (process.platform === 'win32') {
    const [cmd, ...args] = argv
    return spawn(cmd!, args, { stdio: opts.stdio, env: opts.env, shell: false })
  }
  const stdio = typeof opts.stdio === 'string' ? [opts.stdio, opts.stdio, opts.stdio] : [...opts.stdio]
  const group = !process.stdin.isTTY
  // The user's NODE_OPTIONS (a --require of their own) are the command's; the wrapper runs without them.
  const env: NodeJS.ProcessEnv = { ...opts.env, NODE_OPTIONS: '' }
  const args = [argv, group ? 'group' : 'same', opts.env.NODE_OPTIONS ?? null].map((a) => JSON.stringify(a))
  // The fourth pipe is never written: it exists to be closed by the kernel when this process ends.
  return spawn(process.execPath, ['-e', WRAPPER, ...args], {
    stdio: [...stdio.slice(0, 3), 'pipe'],
    env,
    detached: group,
  })
}
