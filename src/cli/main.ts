#!/usr/bin/env node
import { CommanderError } from 'commander'
import { ExitError, FlakewatchError } from '../errors.js'
import { jsonLine, processIo, type Io } from './output.js'
import { createProgram } from './program.js'

/**
 * Runs the CLI and returns the exit code: 0 ok, 1 the gate failed, 2 the tool could not do its job, 130 interrupted.
 * Errors become one line on stderr; `--verbose` adds the stack.
 */
export async function runCli(argv: string[], io: Io = processIo()): Promise<number> {
  const verbose = argv.includes('--verbose')
  const json = wantsJson(argv)
  // Under --json a script reads stdout: every failure is one JSON object there, as well as a line on stderr.
  const jsonError = (code: string, message: string) => {
    if (json) io.stdout.write(`${jsonLine({ error: { code, message } })}\n`)
  }
  const program = createProgram(io)
  try {
    await program.parseAsync(argv, { from: 'user' })
    return 0
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0)
        return 0
      jsonError('FW_USAGE', error.message.replace(/^error: /, ''))
      return 2
    }
    // A deliberate exit (a failed gate, an ingest with failed files) has already printed its own JSON.
    if (error instanceof ExitError) return error.exitCode
    if (error instanceof FlakewatchError) {
      io.stderr.write(`flakewatch: ${error.message}\n`)
      if (verbose && error.stack) io.stderr.write(`${error.stack}\n`)
      jsonError(error.code, error.message)
      return 2
    }
    const e = error as NodeJS.ErrnoException
    if (e?.code === 'EPIPE') return 0
    io.stderr.write(`flakewatch: internal error: ${e?.message ?? String(error)}\n`)
    io.stderr.write(
      verbose ? `${e?.stack}\n` : 'This is a bug in flakewatch. Re-run with --verbose and report the output.\n',
    )
    jsonError('FW_INTERNAL', e?.message ?? String(error))
    return 2
  }
}

/** `--json` or `--format json` anywhere before a `--` (after it, the words belong to the wrapped command). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--')
  const own = end === -1 ? argv : argv.slice(0, end)
  return own.some((a, i) => a === '--json' || a === '--format=json' || (a === '--format' && own[i + 1] === 'json'))
}

const isMain =
  process.argv[1] &&
  import.meta.url === new URL(`file://${(await import('node:fs')).realpathSync(process.argv[1])}`).href
if (isMain) {
  // `flakewatch export bundle | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0)
  })
  // A command that handles SIGINT itself (serve) closes cleanly; anything else ends at once with 130.
  process.on('SIGINT', () => {
    if (process.listenerCount('SIGINT') === 1) process.exit(130)
  })
  const code = await runCli(process.argv.slice(2))
  process.exitCode = code
}
