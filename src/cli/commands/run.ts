import { constants } from 'node:os'
import { stat } from 'node:fs/promises'
import { glob } from 'tinyglobby'
import { InputError } from '../../errors.js'
import type { Io } from '../output.js'
import { printGate, runGate, type GateCommandOptions } from './gate.js'
import { projectStoreFlags } from '../project-option.js'
import { spawnTied } from '../tied-child.js'

/** Where test runners usually write reports, used when no --report is given. */
export const DEFAULT_REPORT_GLOBS = [
  '**/junit*.xml',
  '**/TEST-*.xml',
  '**/test-results/**/*.xml',
  '**/test-results/**/*.json',
  '**/reports/**/*.xml',
  '**/ctrf/**/*.json',
  '**/*.trx',
]

export interface RunCommandOptions extends GateCommandOptions {
  report?: string[]
  /** A passing command that wrote no report passes (default: exit 2, as a typo in `--report` would). */
  allowNoReport?: boolean
}

export interface RunOutcome {
  exitCode: number
  commandCode: number
  reports: string[]
  message: string
}

/** Signals `run` passes on to the command, so that stopping flakewatch stops the tests too. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/** 128 + the signal's number, as shells report a process a signal ended (SIGINT 130, SIGTERM 143). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 1)
}

interface CommandEnd {
  code: number
  /** The signal that stopped the command, or that flakewatch received and passed on. */
  signal: NodeJS.Signals | null
}

function runCommand(argv: string[], io: Io, quietStdout: boolean): Promise<CommandEnd> {
  return new Promise((resolve) => {
    const cmd = argv[0]
    // With --json our stdout carries only the verdict, so the command's own output goes to stderr.
    const stdio = quietStdout ? (['inherit', 2, 'inherit'] as const) : ('inherit' as const)
    // Tied: if flakewatch is killed outright (SIGKILL, OOM), the tests do not run on unwatched.
    const child = spawnTied(argv, { stdio: stdio as never, env: io.env })
    let received: NodeJS.Signals | null = null
    const forward = (signal: NodeJS.Signals) => {
      received = signal
      child.kill(signal)
    }
    for (const s of FORWARDED) process.on(s, forward)
    const done = (end: CommandEnd) => {
      for (const s of FORWARDED) process.off(s, forward)
      resolve(end)
    }
    child.on('error', (error) => {
      io.stderr.write(`flakewatch run: cannot start ${cmd}: ${error.message}\n`)
      done({ code: 127, signal: null })
    })
    child.on('exit', (code, signal) => {
      const stoppedBy = signal ?? received
      done({ code: stoppedBy ? signalExitCode(stoppedBy) : (code ?? 1), signal: stoppedBy })
    })
  })
}

/** Reports written by this command: matching files modified after it started, so stale reports never count. */
async function freshReports(globs: string[], since: number): Promise<string[]> {
  const files = await glob(globs, { ignore: ['**/node_modules/**', '**/.git/**'], absolute: false })
  const fresh: string[] = []
  for (const f of files) {
    const info = await stat(f).catch(() => null)
    if (info && info.mtimeMs >= since - 1000) fresh.push(f)
  }
  return fresh.sort()
}

/**
 * Runs a test command, ingests the reports it wrote and applies the gate. It never passes silently: a command that
 * failed without a report, or failed although every test passed, exits with the command's own code.
 */
export async function run(argv: string[], opts: RunCommandOptions, io: Io): Promise<RunOutcome> {
  // An unknown --project is a usage error before the tests run, not after.
  opts = projectStoreFlags(opts, io.env)
  const started = Date.now()
  const end = await runCommand(argv, io, Boolean(opts.json))
  const commandCode = end.code
  if (end.signal) {
    // An interrupted test run proves nothing either way: record nothing, decide nothing, exit as the signal says.
    const message = `flakewatch run: interrupted by ${end.signal}; nothing was recorded`
    return { exitCode: commandCode, commandCode, reports: [], message }
  }
  const globs = opts.report?.length ? opts.report : DEFAULT_REPORT_GLOBS
  const reports = await freshReports(globs, started)
  if (reports.length === 0) {
    if (commandCode !== 0) {
      const message = `flakewatch run: the command failed (exit ${commandCode}) and wrote no report; failing with its exit code`
      return { exitCode: commandCode, commandCode, reports, message }
    }
    // A typo in --report, or a runner that lost its reporter, would otherwise turn recording off without a word.
    const where = opts.report?.length ? globs.map((g) => `"${g}"`).join(', ') : 'the usual report paths (no --report)'
    if (opts.allowNoReport) {
      const message = `flakewatch run: the command passed and wrote no report matching ${where}; nothing was recorded (--allow-no-report)`
      return { exitCode: 0, commandCode, reports, message }
    }
    throw new InputError(
      `run: the command passed but wrote no report matching ${where}, so nothing was recorded. ` +
        'Check the pattern against where the runner writes its report, or pass --allow-no-report',
    )
  }
  const { result } = await runGate(reports, { ...opts, ingest: opts.ingest ?? true }, io)
  printGate(result, opts, io)
  if (result.verdict === 'fail') return { exitCode: 1, commandCode, reports, message: 'flakewatch run: gate failed' }
  if (commandCode !== 0 && result.quarantined.length === 0 && result.totals.failed === 0) {
    // The runner failed for a reason the reports do not show (a crash, a coverage threshold): that is not ours to forgive.
    return {
      exitCode: commandCode,
      commandCode,
      reports,
      message: `flakewatch run: the command failed (exit ${commandCode}) but its reports show no failing test; keeping its exit code`,
    }
  }
  return {
    exitCode: 0,
    commandCode,
    reports,
    message:
      commandCode === 0
        ? 'flakewatch run: passed'
        : `flakewatch run: every failure is quarantined; passing (command exit ${commandCode})`,
  }
}
