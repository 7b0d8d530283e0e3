import { Command, Option } from 'commander'
import { ExitError } from '../errors.js'
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

  return program
}
