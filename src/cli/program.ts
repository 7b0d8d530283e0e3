import { Command, Option } from 'commander'
import { ExitError, InputError } from '../errors.js'
import { FORMATS } from '../ingest/index.js'
import { VERSION } from '../version.js'
import type { Io } from './output.js'

const collect = (value: string, previous: string[] = []) => [...previous, value]

/** Adds the run-context flags; each defaults from the CI's own variables (GitHub, GitLab, Buildkite, CircleCI, Jenkins). */
export function addRunFlags(cmd: Command): Command {
  return cmd
    .option('--run-id <id>', 'run id (default: from CI variables, else derived from the report content)')
    .option('--suite <name>', 'suite name, the first part of every test id (default: FLAKEWATCH_SUITE or "default")')
    .option('--branch <name>', 'source branch')
    .option('--revision <sha>', 'source revision')
    .option('--pipeline-id <id>', 'CI pipeline id')
    .option('--pipeline-url <url>', 'CI pipeline URL')
    .option('--job-id <id>', 'CI job id')
    .option('--job-url <url>', 'CI job URL')
    .option('--job-status <status>', 'CI job status')
    .option('--pipeline-status <status>', 'CI pipeline status')
    .option('--runner <id>', 'runner id')
    .option('--artifacts-url <url>', 'URL of this run’s CI artifacts')
    .addOption(new Option('--run-status <status>', 'run status').choices(['complete', 'interrupted', 'unknown']))
    .option('--env <key=value>', 'environment facet (repeatable)', collect, [])
}

/** The command tree. Each action imports its command module lazily, so `flakewatch gate` never loads the server. */
export function createProgram(io: Io): Command {
  const program = new Command()
  program
    .name('flakewatch')
    .description('Find, measure, quarantine and show flaky tests from CI reports.')
    .version(VERSION, '-V, --version')
    .option('--verbose', 'show stack traces on errors')
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .showHelpAfterError()
    .exitOverride()

  addRunFlags(
    program
      .command('ingest')
      .description('store test reports (JUnit XML, TRX, CTRF, Playwright JSON, Jest JSON, simple CI JSON)')
      .argument('<inputs...>', 'report files, directories or globs')
      .option('--db <path|url>', 'SQLite file or postgres:// URL (default: FLAKEWATCH_DB or .flakewatch.db)')
      .addOption(new Option('--format <format>', 'report format (default: detected from content)').choices(FORMATS))
      .option('--replace', 'overwrite a run that is already stored')
      .option('--json', 'print a JSON summary')
      .option('-o, --output <file>', 'write the summary to a file'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ flakewatch ingest test-results/junit.xml
  $ flakewatch ingest 'reports/**/*.xml' --suite unit --env os=linux
  $ flakewatch ingest results.json --format playwright-json --json`,
    )
    .action(async (inputs: string[], opts) => {
      const { ingest, printIngest } = await import('./commands/ingest.js')
      const summary = await ingest(inputs, opts, io)
      printIngest(summary, opts, io)
      if (summary.failed.length) throw new ExitError(2, `${summary.failed.length} report(s) failed`)
    })

  const analysisCmd = (cmd: Command) =>
    cmd
      .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file (default: flakewatch.config.json)')
      .option('--suite <name>', 'only this suite')
      .option('--branch <name>', 'only runs on this branch')
      .option('--since <when>', 'only runs since a date or N days back (14d)')
      .option('--json', 'print JSON')
      .addOption(new Option('--format <format>', 'output format').choices(['table', 'markdown', 'json']).default('table'))
      .option('-o, --output <file>', 'write the output to a file')

  analysisCmd(program.command('analyze'))
    .description('the flakiness leaderboard: flip rate, EWMA, score, confidence, class, recommendation and verdict per test')
    .option('--verdict <list>', 'only these verdicts (flaky,broken,healthy,insufficient_data)')
    .option('--class <list>', 'only these flip-rate classes (stable,intermittent,flaky,chronic)')
    .option('--limit <n>', 'show the first N')
    .addHelpText(
      'after',
      `
Examples:
  $ flakewatch analyze --verdict flaky,broken
  $ flakewatch analyze --suite e2e --since 14d --format markdown
  $ flakewatch analyze --json > flaky.json`,
    )
    .action(async (opts) => {
      const { analyze, printAnalyze } = await import('./commands/analyze.js')
      printAnalyze(await analyze(opts, io), opts, io)
    })

  analysisCmd(program.command('show'))
    .description('one test: history strip, score components, failure modes, contexts, hints and quarantine')
    .argument('<test-id>', 'the test id (suite::module::name)')
    .addHelpText('after', `\nExamples:\n  $ flakewatch show 'unit::src/cart.test.ts::adds an item'`)
    .action(async (testId: string, opts) => {
      const { show, printShow } = await import('./commands/analyze.js')
      printShow(await show(testId, opts, io), opts, io)
    })

  addRunFlags(
    program
      .command('gate')
      .description('decide the CI job: exit 0 if every failed test is quarantined, else 1')
      .argument('<reports...>', 'this job’s report files, directories or globs')
      .option('--db <path|url>', 'store to read quarantines from (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--quarantine-file <file>', 'read quarantines from this file instead of the store (no database needed)')
      .addOption(new Option('--format <format>', 'report format (default: detected)').choices(FORMATS))
      .option('--fail-on-flaky', 'also fail on tests that passed only on retry')
      .option('--junit-out <file>', 'write a JUnit copy with quarantined failures marked skipped')
      .option('--ingest', 'also store the reports')
      .option('--json', 'print the decision as JSON')
      .option('-o, --output <file>', 'write the output to a file'),
  )
    .addHelpText(
      'after',
      `
Exit codes: 0 pass, 1 a failure is not quarantined, 2 bad input.

Examples:
  $ flakewatch gate 'test-results/*.xml'
  $ flakewatch gate junit.xml --quarantine-file .flakewatch/quarantine.json --junit-out junit-gated.xml`,
    )
    .action(async (reports: string[], opts) => {
      const { runGate, printGate } = await import('./commands/gate.js')
      const { result } = await runGate(reports, opts, io)
      printGate(result, opts, io)
      if (result.verdict === 'fail') throw new ExitError(1)
    })

  addRunFlags(
    program
      .command('run')
      .description('run a test command, record its reports and exit with the gate’s verdict')
      .argument('<command...>', 'the test command, after --')
      .option('--report <glob>', 'where the command writes reports (repeatable; default: common report paths)', collect, [])
      .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--quarantine-file <file>', 'read quarantines from this file instead of the store')
      .addOption(new Option('--format <format>', 'report format (default: detected)').choices(FORMATS))
      .option('--fail-on-flaky', 'also fail on tests that passed only on retry')
      .option('--junit-out <file>', 'write a JUnit copy with quarantined failures marked skipped')
      .option('--no-ingest', 'do not store the reports')
      .option('--json', 'print the gate decision as JSON'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ flakewatch run --report 'reports/*.xml' -- npx vitest run --reporter=junit --outputFile=reports/junit.xml
  $ flakewatch run -- npx playwright test`,
    )
    .action(async (command: string[], opts) => {
      const { run } = await import('./commands/run.js')
      const outcome = await run(command, opts, io)
      io.stderr.write(`${outcome.message}\n`)
      if (outcome.exitCode !== 0) throw new ExitError(outcome.exitCode)
    })

  const quarantine = program.command('quarantine').description('manage quarantined tests')
  const qOpts = (cmd: Command) =>
    cmd.option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)').option('--config <file>', 'config file')
  qOpts(quarantine.command('add'))
    .description('quarantine a test: its failures stop failing the build')
    .argument('<test-id>')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .option('--owner <name>', 'who will fix it')
    .option('--issue <url>', 'tracking issue')
    .option('--expires <when>', 'ISO date, number of days (14d) or "never" (default: quarantine.expiryDays)')
    .option('--actor <name>', 'who is doing this (default: CI user or $USER)')
    .option('--json', 'print the record as JSON')
    .action(async (testId: string, opts) => {
      const { quarantineAdd, printRecords } = await import('./commands/quarantine.js')
      printRecords([await quarantineAdd(testId, opts, io)], opts, io)
    })
  qOpts(quarantine.command('remove'))
    .description('release a test from quarantine')
    .argument('<test-id>')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .option('--actor <name>', 'who is doing this')
    .action(async (testId: string, opts) => {
      const { quarantineRemove } = await import('./commands/quarantine.js')
      if (!(await quarantineRemove(testId, opts, io))) throw new InputError(`${testId} is not quarantined`)
      io.stderr.write(`released ${testId}\n`)
    })
  qOpts(quarantine.command('list'))
    .description('list quarantined tests')
    .option('--json', 'print JSON')
    .option('-o, --output <file>', 'write to a file')
    .action(async (opts) => {
      const { quarantineList, printRecords } = await import('./commands/quarantine.js')
      printRecords(await quarantineList(opts, io), opts, io)
    })
  qOpts(quarantine.command('auto'))
    .description('apply the quarantine policy: quarantine flaky tests, release fixed and expired ones')
    .option('--dry-run', 'show what would change')
    .option('--json', 'print JSON')
    .action(async (opts) => {
      const { quarantineAuto, printAuto } = await import('./commands/quarantine.js')
      printAuto(await quarantineAuto(opts, io), opts, io)
    })
  qOpts(quarantine.command('export'))
    .description('write the quarantine file (sorted, for review in git)')
    .option('--file <file>', 'default: quarantine.file (.flakewatch/quarantine.json)')
    .action(async (opts) => {
      const { quarantineExport } = await import('./commands/quarantine.js')
      const { file, count } = await quarantineExport(opts, io)
      io.stderr.write(`wrote ${count} quarantine(s) to ${file}\n`)
    })
  qOpts(quarantine.command('import'))
    .description('apply the quarantine file: additions, edits and removals, each audited')
    .option('--file <file>', 'default: quarantine.file (.flakewatch/quarantine.json)')
    .option('--actor <name>', 'who is doing this')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { quarantineImport } = await import('./commands/quarantine.js')
      const res = await quarantineImport(opts, io)
      if (opts.json) io.stdout.write(`${JSON.stringify(res, null, 2)}\n`)
      else io.stderr.write(`${res.file}: ${res.added.length} added, ${res.updated.length} updated, ${res.removed.length} removed\n`)
    })

  program
    .command('prune')
    .description('delete runs older than N days (quarantines and audit are kept)')
    .requiredOption('--days <n>', 'keep this many days')
    .option('--db <path|url>', 'store')
    .option('--config <file>', 'config file')
    .option('--json', 'print JSON')
    .action(async (opts: { days: string; json?: boolean }) => {
      const { prune } = await import('./commands/quarantine.js')
      const res = await prune(opts, io)
      if (opts.json) io.stdout.write(`${JSON.stringify(res)}\n`)
      else io.stderr.write(`pruned ${res.runs} run(s) and ${res.results} result(s)\n`)
    })

  return program
}
