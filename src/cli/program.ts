import { Command, Option } from 'commander'
import { ExitError, InputError } from '../errors.js'
import { FORMATS } from '../ingest/formats.js'
import { VERSION } from '../version.js'
import { emitJson, jsonLine, type Io } from './output.js'
import type { StoreFlags } from './project-option.js'
import type { AnalyzeCommandOptions } from './commands/analyze.js'
import type { AuditHeadOptions, AuditVerifyOptions } from './commands/audit.js'
import type { ExportBundleCommandOptions, ExportTableCommandOptions } from './commands/export.js'
import type { GateCommandOptions } from './commands/gate.js'
import type { ImpactCommandOptions } from './commands/impact.js'
import type { ImportCommandOptions } from './commands/import.js'
import type { IngestCommandOptions } from './commands/ingest.js'
import type { UploadCommandOptions } from './commands/upload.js'
import type { ListCommandOptions } from './commands/list.js'
import type { NotifyCommandOptions, NotifyLogOptions } from './commands/notify.js'
import type { CommentCommandOptions } from './commands/comment.js'
import type { PublishCommandOptions } from './commands/publish.js'
import type { QuarantineCommandOptions, RuleCommandOptions } from './commands/quarantine.js'
import type { TestsCommandOptions } from './commands/tests.js'
import type { RunCommandOptions } from './commands/run.js'
import type { McpCommandOptions } from './commands/mcp.js'
import type { TicketsCommandOptions, TicketsListOptions } from './commands/tickets.js'
import type { ServeOptions } from './commands/serve.js'
import type { DemoOptions } from './commands/demo.js'

const collect = (value: string, previous: string[] = []) => [...previous, value]

/** `--project <key>` of the commands that work on one store: that project's store and webhooks (docs/projects.md). */
const PROJECT_FLAG = '--project <key>'
const PROJECT_HELP = "work on this project of the config's projects: its store and webhooks"

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
    .option(
      '--root <dir>',
      "repository root that absolute test paths are made relative to (default: FLAKEWATCH_ROOT, the config's root, else the git repository)",
    )
}

/** The flags that say where a pull-request comment goes; `comment`, `gate --comment` and `run --comment` share them. */
export function addCommentFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--provider <provider>', 'where to comment (default: from the CI)').choices(['github', 'gitlab']),
    )
    .option('--pr <number>', 'pull request number / merge request iid (default: from the CI)')
    .option('--repo <owner/name>', 'GitHub repository (default: GITHUB_REPOSITORY)')
    .option('--project <id|path>', 'GitLab project (default: CI_PROJECT_ID)')
    .option('--token <token>', 'API token (default: GITHUB_TOKEN; GitLab: FLAKEWATCH_GITLAB_TOKEN, else CI_JOB_TOKEN)')
    .option('--api-url <url>', 'API base URL (default: GITHUB_API_URL or CI_API_V4_URL)')
    .option(
      '--server-url <url>',
      'flakewatch dashboard URL: each test links to its page (default: FLAKEWATCH_SERVER_URL)',
    )
    .option('--key <name>', 'keeps one comment per key, for several jobs on one pull request', 'default')
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
      .description(
        'store test reports: JUnit XML, TRX, CTRF, Playwright, Jest, Go, TAP, NUnit, xUnit.net, Bazel BEP, Mocha, RSpec, Cucumber, pytest JSON (see --format)',
      )
      .argument('<inputs...>', 'report files, directories or globs')
      .option('--db <path|url>', 'SQLite file or postgres:// URL (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file (with --project)')
      .option(PROJECT_FLAG, PROJECT_HELP)
      .addOption(new Option('--format <format>', 'report format (default: detected from content)').choices(FORMATS))
      .option('--replace', 'overwrite a run that is already stored')
      .option('--max-attempts <n>', 'attempts one result may have (default 100, or FLAKEWATCH_MAX_ATTEMPTS)')
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
    .action(async (inputs: string[], opts: IngestCommandOptions) => {
      const { ingest, printIngest } = await import('./commands/ingest.js')
      const summary = await ingest(inputs, opts, io)
      printIngest(summary, opts, io)
      if (summary.failed.length) throw new ExitError(2, `${summary.failed.length} report(s) failed`)
    })

  addRunFlags(
    program
      .command('upload')
      .description('send test reports to a flakewatch server, with the run context read from the CI')
      .argument('<inputs...>', 'report files, directories or globs')
      .option('--url <url>', 'the server (default: FLAKEWATCH_URL)')
      .option('--token <token>', 'a write token (default: FLAKEWATCH_WRITE_TOKEN)')
      .option(
        '--project <key>',
        'the project on a multi-project server (default: FLAKEWATCH_PROJECT or the CI repository slug)',
      )
      .addOption(new Option('--format <format>', 'report format (default: detected by the server)').choices(FORMATS))
      .option('--replace', 'overwrite a run that is already stored')
      .option('--retries <n>', 'retries of a 5xx, 429 or network error, with backoff (default 3)')
      .option('--strict', 'exit 2 when an upload fails (default: warn and exit 0, so recording never fails a build)')
      .option('--json', 'print a JSON summary')
      .option('-o, --output <file>', 'write the summary to a file'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ flakewatch upload junit.xml --url https://flakewatch.example.com --token "$FLAKEWATCH_WRITE_TOKEN"
  $ FLAKEWATCH_URL=http://127.0.0.1:8080 flakewatch upload reports/ --suite e2e --strict`,
    )
    .action(async (inputs: string[], opts: UploadCommandOptions) => {
      const { upload, printUpload } = await import('./commands/upload.js')
      const entries = await upload(inputs, opts, io)
      printUpload(entries, opts, io)
      const failed = entries.filter((e) => !e.ok).length
      if (failed && opts.strict) throw new ExitError(2, `${failed} upload(s) failed`)
    })

  /** The store and the runs a command judges tests on, as `analyze` selects them. */
  const selectionFlags = (cmd: Command) =>
    cmd
      .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file (default: flakewatch.config.json)')
      .option(PROJECT_FLAG, PROJECT_HELP)
      .option('--suite <name>', 'only this suite')
      .option('--branch <name>', 'only runs on this branch')
      .option('--since <when>', 'only runs since a date or N days back (14d)')
      .option('--as-of <date>', 'end every analysis window here (default: the newest run)')
  const analysisCmd = (cmd: Command) =>
    selectionFlags(cmd)
      .option('--json', 'print JSON')
      .addOption(
        new Option('--format <format>', 'output format').choices(['table', 'markdown', 'json']).default('table'),
      )
      .option('-o, --output <file>', 'write the output to a file')

  analysisCmd(program.command('analyze'))
    .description(
      'the flakiness leaderboard: flip rate, EWMA, score, confidence, class, recommendation and verdict per test',
    )
    .option('--verdict <list>', 'only these verdicts (flaky,broken,healthy,insufficient_data)')
    .option('--class <list>', 'only these flip-rate classes (stable,intermittent,flaky,chronic)')
    .option('--limit <n>', 'show the first N')
    .option('--owner <owner>', 'only tests this code owner owns (from CODEOWNERS), e.g. @org/team')
    .option(
      '--policy <file>',
      "judge under a candidate policy: JSON with the config's analysis, quarantine and successRate keys",
    )
    .option('--diff', 'with --policy: only the tests whose verdict, quarantine or release would change, and why')
    .addHelpText(
      'after',
      `
Examples:
  $ flakewatch analyze --verdict flaky,broken
  $ flakewatch analyze --suite e2e --since 14d --format markdown
  $ flakewatch analyze --json > flaky.json
  $ flakewatch analyze --policy candidate.json --diff`,
    )
    .action(async (opts: AnalyzeCommandOptions) => {
      if (opts.diff) {
        const { policyDiff, printPolicyDiff } = await import('./commands/policy-diff.js')
        return printPolicyDiff(await policyDiff(opts, io), opts, io)
      }
      const { analyzeAndPrint } = await import('./commands/analyze.js')
      await analyzeAndPrint(opts, io)
    })

  analysisCmd(program.command('show'))
    .description('one test: history strip, score components, failure modes, contexts, hints and quarantine')
    .argument('<test-id>', 'the test id (suite::module::name)')
    .addHelpText('after', `\nExamples:\n  $ flakewatch show 'unit::src/cart.test.ts::adds an item'`)
    .action(async (testId: string, opts: AnalyzeCommandOptions) => {
      const { show, printShow } = await import('./commands/analyze.js')
      printShow(await show(testId, opts, io), opts, io)
    })

  selectionFlags(program.command('impact'))
    .description('what flaky tests cost CI: time lost, failures and reruns per week, owner, suite and test')
    .option('--limit <n>', 'the most costly tests listed, 1 to 100 (default 20)')
    .option('--json', 'print the JSON of GET /api/v1/impact')
    .option('-o, --output <file>', 'write the output to a file')
    .addHelpText(
      'after',
      `
Examples:
  $ flakewatch impact --since 90d
  $ flakewatch impact --suite e2e --branch main --limit 50 --json`,
    )
    .action(async (opts: ImpactCommandOptions) => {
      const { impact, printImpact } = await import('./commands/impact.js')
      printImpact(await impact(opts, io), opts, io)
    })

  addRunFlags(
    program
      .command('gate')
      .description('decide the CI job: exit 0 if every failed test is quarantined, else 1')
      .argument('<reports...>', 'this job’s report files, directories or globs')
      .option('--db <path|url>', 'store to read quarantines from (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file (with --project or --comment)')
      .option(PROJECT_FLAG, PROJECT_HELP)
      .option('--quarantine-file <file>', 'read quarantines from this file instead of the store (no database needed)')
      .addOption(new Option('--format <format>', 'report format (default: detected)').choices(FORMATS))
      .option('--fail-on-flaky', 'also fail on tests that passed only on retry')
      .option('--junit-out <file>', 'write a JUnit copy with quarantined failures marked skipped')
      .option('--allow-empty', 'pass a report with no tests (default: exit 2, a broken test step)')
      .option('--ingest', 'also store the reports')
      .option('--comment', 'also post the pull-request comment (never fails the build)')
      .option('--json', 'print the decision as JSON')
      .option('-o, --output <file>', 'write the output to a file'),
  )
    .addHelpText(
      'after',
      `
Exit codes: 0 pass, 1 a failure is not quarantined, 2 bad input (including a report with no tests).

Examples:
  $ flakewatch gate 'test-results/*.xml'
  $ flakewatch gate junit.xml --quarantine-file .flakewatch/quarantine.json --junit-out junit-gated.xml`,
    )
    .action(async (reports: string[], opts: GateCommandOptions) => {
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
      .option(
        '--report <glob>',
        'where the command writes reports (repeatable; default: common report paths)',
        collect,
        [],
      )
      .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file (with --project or --comment)')
      .option(PROJECT_FLAG, PROJECT_HELP)
      .option('--quarantine-file <file>', 'read quarantines from this file instead of the store')
      .addOption(new Option('--format <format>', 'report format (default: detected)').choices(FORMATS))
      .option('--fail-on-flaky', 'also fail on tests that passed only on retry')
      .option('--junit-out <file>', 'write a JUnit copy with quarantined failures marked skipped')
      .option('--allow-empty', 'pass a report with no tests (default: exit 2, a broken test step)')
      .option(
        '--allow-no-report',
        'pass when the command passed but wrote no report (default: exit 2, since nothing would be recorded)',
      )
      .option('--no-ingest', 'do not store the reports')
      .option('--comment', 'also post the pull-request comment (never fails the build)')
      .option('--json', 'print the gate decision as JSON'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ flakewatch run --report 'reports/*.xml' -- npx vitest run --reporter=junit --outputFile=reports/junit.xml
  $ flakewatch run -- npx playwright test`,
    )
    .action(async (command: string[], opts: RunCommandOptions) => {
      const { run } = await import('./commands/run.js')
      const outcome = await run(command, opts, io)
      io.stderr.write(`${outcome.message}\n`)
      if (outcome.exitCode !== 0) throw new ExitError(outcome.exitCode)
    })

  const tests = program.command('tests').description('merge or split test ids (the names a test is reported by)')
  const tOpts = (cmd: Command) =>
    cmd
      .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file')
      .option(PROJECT_FLAG, PROJECT_HELP)
      .requiredOption('--reason <text>', 'why (kept in the audit log)')
      .option('--actor <name>', 'who is doing this (default: CI user or $USER)')
      .option('--json', 'print the outcome as JSON')
  tOpts(tests.command('merge'))
    .description('make test <from> part of test <into>: its results move, and its id becomes a name of <into>')
    .argument('<from>', 'the test id to merge away')
    .argument('<into>', 'the test id that stays')
    .addHelpText(
      'after',
      `\nExamples:\n  $ flakewatch tests merge 'unit::Auth::Auth expires' 'unit::src/auth.test.js::Auth › expires' --reason 'jest-junit defaults'`,
    )
    .action(async (from: string, into: string, opts: TestsCommandOptions) => {
      const { testsMerge } = await import('./commands/tests.js')
      await testsMerge(from, into, opts, io)
    })
  tOpts(tests.command('split'))
    .description('keep a name apart from the test it was matched to: later reports of it give a test of its own')
    .argument('<name>', 'the name (a test id as a report gave it), as `show` lists it')
    .addHelpText('after', `\nExamples:\n  $ flakewatch tests split 'unit::src/a.test.js::top' --reason 'two tests'`)
    .action(async (name: string, opts: TestsCommandOptions) => {
      const { testsSplit } = await import('./commands/tests.js')
      await testsSplit(name, opts, io)
    })

  const quarantine = program.command('quarantine').description('manage quarantined tests')
  const qOpts = (cmd: Command) =>
    cmd
      .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file')
      .option(PROJECT_FLAG, PROJECT_HELP)
  qOpts(quarantine.command('add'))
    .description('quarantine a test: its failures stop failing the build')
    .argument('<test-id>')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .option('--owner <name>', 'who will fix it (default: the test’s code owners from CODEOWNERS)')
    .option('--issue <url>', 'tracking issue')
    .option('--expires <when>', 'ISO date, number of days (14d) or "never" (default: quarantine.expiryDays)')
    .option('--actor <name>', 'who is doing this (default: CI user or $USER)')
    .option('--allow-unknown', 'quarantine a test id the store has never seen')
    .option('--json', 'print the record as JSON')
    .action(async (testId: string, opts: QuarantineCommandOptions) => {
      const { quarantineAdd, printRecords } = await import('./commands/quarantine.js')
      printRecords([await quarantineAdd(testId, opts, io)], opts, io)
    })
  qOpts(quarantine.command('remove'))
    .description('release a test from quarantine')
    .argument('<test-id>')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .option('--actor <name>', 'who is doing this')
    .action(async (testId: string, opts: QuarantineCommandOptions) => {
      const { quarantineRemove } = await import('./commands/quarantine.js')
      if (!(await quarantineRemove(testId, opts, io))) throw new InputError(`${testId} is not quarantined`)
      io.stderr.write(`released ${testId}\n`)
    })
  qOpts(quarantine.command('list'))
    .description('list quarantined tests, and rules with the tests each covered lately')
    .option('--owner <owner>', 'only quarantines and rules this owner has (one of their owners)')
    .option('--json', 'print JSON')
    .option('-o, --output <file>', 'write to a file')
    .action(async (opts: QuarantineCommandOptions) => {
      const { quarantineList, printListing } = await import('./commands/quarantine.js')
      printListing(await quarantineList(opts, io), opts, io)
    })
  const rule = quarantine
    .command('rule')
    .description('quarantine by pattern: test id, file, title, message, branch, env')
  qOpts(rule.command('add'))
    .description('create or replace a rule: failures it matches stop failing the build')
    .argument('<id>', 'a short name, e.g. timeouts-arm64')
    .option('--test-id <glob>', 'glob over test ids, e.g. "e2e::checkout/**"')
    .option('--file-path <glob>', 'glob over test files, e.g. "src/legacy/**"')
    .option('--title <regex>', 'regex over test names')
    .option('--message <regex>', 'regex over failure messages: only failures with this message are forgiven')
    .option('--branch <glob>', 'only runs on this branch')
    .option('--env <key=value>', 'only runs with this environment facet (repeatable)', collect, [])
    .option('--allow-broad', 'allow a rule that forgives every failure (in its branch and env), such as --test-id "**"')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .option('--owner <name>', 'who will fix it')
    .option('--issue <url>', 'tracking issue (http or https)')
    .option('--expires <when>', 'ISO date, number of days (14d) or "never" (default: quarantine.expiryDays)')
    .option('--actor <name>', 'who is doing this (default: CI user or $USER)')
    .option('--json', 'print the rule as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ flakewatch quarantine rule add timeouts-arm64 --message 'Timeout \\d+ms exceeded' --env runner=arm64 \\
      --reason 'arm64 runners are slow' --expires 2026-12-30`,
    )
    .action(async (id: string, opts: RuleCommandOptions) => {
      const { ruleAdd, printRule } = await import('./commands/quarantine.js')
      printRule(await ruleAdd(id, opts, io), opts, io)
    })
  qOpts(rule.command('remove'))
    .description('remove a rule')
    .argument('<id>')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .option('--actor <name>', 'who is doing this')
    .action(async (id: string, opts: QuarantineCommandOptions) => {
      const { ruleRemove } = await import('./commands/quarantine.js')
      if (!(await ruleRemove(id, opts, io))) throw new InputError(`there is no rule ${id}`)
      io.stderr.write(`removed rule ${id}\n`)
    })
  qOpts(quarantine.command('auto'))
    .description('apply the quarantine policy: quarantine flaky tests, release fixed and expired ones')
    .option('--dry-run', 'show what would change')
    .option('--as-of <date>', 'judge tests as of this date, like analyze --as-of (default: the newest run)')
    .option('--json', 'print JSON')
    .action(async (opts: QuarantineCommandOptions) => {
      const { quarantineAuto, printAuto } = await import('./commands/quarantine.js')
      printAuto(await quarantineAuto(opts, io), opts, io)
    })
  qOpts(quarantine.command('export'))
    .description('write the quarantine file (sorted, for review in git)')
    .option('-o, --output <file>', 'default: quarantine.file (.flakewatch/quarantine.json)')
    .addOption(new Option('--file <file>', 'the same as --output (kept for old scripts)').hideHelp())
    .action(async (opts: QuarantineCommandOptions) => {
      const { quarantineExport } = await import('./commands/quarantine.js')
      const { file, count, rules } = await quarantineExport(opts, io)
      io.stderr.write(`wrote ${count} quarantine(s) and ${rules} rule(s) to ${file}\n`)
    })
  qOpts(quarantine.command('import'))
    .description('apply the quarantine file: additions, edits and removals, each audited')
    .option('--file <file>', 'default: quarantine.file (.flakewatch/quarantine.json)')
    .option('--actor <name>', 'who is doing this')
    .option('--allow-unknown', 'accept quarantines of test ids the store has never seen')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { quarantineImport } = await import('./commands/quarantine.js')
      const res = await quarantineImport(opts, io)
      if (opts.json) emitJson(io, res)
      else
        io.stderr.write(
          `${res.file}: ${res.added.length} added, ${res.updated.length} updated, ${res.removed.length} removed; ` +
            `rules: ${res.rules.added.length} added, ${res.rules.updated.length} updated, ${res.rules.removed.length} removed\n`,
        )
    })

  program
    .command('prune')
    .description('delete runs older than N days (quarantines and audit are kept)')
    .requiredOption('--days <n>', 'keep this many days')
    .option('--db <path|url>', 'store')
    .option('--config <file>', 'config file')
    .option(PROJECT_FLAG, PROJECT_HELP)
    .option('--json', 'print JSON')
    .action(async (opts: { days: string; json?: boolean }) => {
      const { prune } = await import('./commands/quarantine.js')
      const res = await prune(opts, io)
      if (opts.json) io.stdout.write(`${jsonLine(res)}\n`)
      else io.stderr.write(`pruned ${res.runs} run(s) and ${res.results} result(s)\n`)
    })

  const bundleFlags = (cmd: Command) =>
    cmd
      .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file (analysis settings for --classification verdict)')
      .option('--days <n>', 'days of history in the bundle, by run start time', '14')
      .option('--as-of <date>', 'the window ends here (default: the newest run)')
      .option('--suite <name>', 'only runs of this suite')
      .option(
        '--context-keys <keys>',
        'env facets that make a context (comma-separated)',
        'gfx_api,quality,custom_profile_hash',
      )
      .addOption(
        new Option(
          '--classification <mode>',
          'flake_classification from GitLabViz pass-rate thresholds, or from flakewatch verdicts',
        )
          .choices(['thresholds', 'verdict'])
          .default('thresholds'),
      )

  const exportCmd = program
    .command('export')
    .description('write data for other tools: GitLabViz bundle, CSV, success-rate stats')

  bundleFlags(exportCmd.command('bundle'))
    .description('write the GitLabViz flake-history bundle v1 (compact JSON) to stdout or a file')
    .option(PROJECT_FLAG, PROJECT_HELP)
    .option('-o, --output <file>', 'write to this file (atomically) instead of stdout')
    .option('--json', 'with --output, print a JSON summary on stdout')
    .addHelpText(
      'after',
      `
The bundle validates against schema/flake-history-bundle.v1.schema.json. Runs carry every field flakewatch knows
(null when unknown); each test has one results_by_context entry per combination of the context keys.

Examples:
  $ flakewatch export bundle -o flake-history.json
  $ flakewatch export bundle --days 30 --suite nightly --classification verdict -o bundle.json
  $ flakewatch export bundle --context-keys browser,os | gzip > bundle.json.gz`,
    )
    .action(async (opts: ExportBundleCommandOptions) => {
      const { exportBundle, printExportBundle } = await import('./commands/export.js')
      printExportBundle(await exportBundle(opts, io), opts, io)
    })

  const tableFlags = (cmd: Command) =>
    cmd
      .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file')
      .option(PROJECT_FLAG, PROJECT_HELP)
      .option('--suite <name>', 'only runs of this suite')
      .option('--branch <name>', 'only runs on this branch')
      .option('--days <n>', 'only runs of the last N days (default: the analysis lookback)')
      .option('--as-of <date>', 'end every analysis window here (default: the newest run)')
      .option('-o, --output <file>', 'write to a file instead of stdout')

  tableFlags(exportCmd.command('csv'))
    .description('one CSV row per test with its metrics (runs, pass rate, flip rate, score, verdict, …)')
    .addHelpText(
      'after',
      `
Cells that a spreadsheet would run as a formula (starting with = + - @) are prefixed with a quote.

Examples:
  $ flakewatch export csv -o flaky-tests.csv
  $ flakewatch export csv --suite e2e --days 14 > e2e.csv`,
    )
    .action(async (opts: ExportTableCommandOptions) => {
      const { exportCsv, printExportCsv } = await import('./commands/export.js')
      await printExportCsv(await exportCsv(opts, io), opts, io)
    })

  tableFlags(exportCmd.command('stats'))
    .description('per-test success rates as JSON: { "test id": 0.97 } (successRate.days, relevant runs only)')
    .addHelpText(
      'after',
      `
Examples:
  $ flakewatch export stats -o success-rates.json
  $ flakewatch export stats --suite unit | jq 'to_entries | map(select(.value < 0.9))'`,
    )
    .action(async (opts: ExportTableCommandOptions) => {
      const { exportStats, printExportStats } = await import('./commands/export.js')
      printExportStats(await exportStats(opts, io), opts, io)
    })

  program
    .command('import')
    .description('load data from other tools into the store')
    .command('bundle')
    .description('store a GitLabViz flake-history bundle v1: its runs, and each test’s pass/fail per run')
    .argument('<file>', 'bundle JSON file')
    .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
    .option('--config <file>', 'config file')
    .option(PROJECT_FLAG, PROJECT_HELP)
    .option(
      '--context-keys <keys>',
      'bundle context fields that become env facets (comma-separated)',
      'gfx_api,quality,custom_profile_hash',
    )
    .option('--replace', 'overwrite runs that are already stored')
    .option('--json', 'print a JSON summary')
    .option('-o, --output <file>', 'write the summary to a file')
    .addHelpText(
      'after',
      `
Bundles with a schema_version other than 1 are refused.

Examples:
  $ flakewatch import bundle flake-history.json
  $ flakewatch import bundle bundle.json --db postgres://ci@db/flakewatch --json`,
    )
    .action(async (file: string, opts: ImportCommandOptions) => {
      const { importBundleFile, printImport } = await import('./commands/import.js')
      printImport(await importBundleFile(file, opts, io), opts, io)
    })

  bundleFlags(
    program
      .command('publish')
      .description('publish data where other tools read it')
      .command('gitlab')
      .description('upload the flake-history bundle as a new GitLab generic package version, then prune old versions'),
  )
    .option('--url <url>', 'GitLab URL (default: CI_SERVER_URL)')
    .option('--project <id|path>', 'project id or path (default: CI_PROJECT_ID)')
    .option('--package <name>', 'generic package name', 'flake-history')
    .option('--token <token>', 'access token sent as PRIVATE-TOKEN (default: CI_JOB_TOKEN, sent as JOB-TOKEN)')
    .option('--file <bundle.json>', 'publish this bundle instead of exporting one from the store')
    .option('--keep-days <n>', 'delete package versions older than this (at least 7 days are always kept)', '14')
    .option(
      '--accumulate',
      'first add the runs of the newest published version to the store, so that the history grows from job to job',
    )
    .option('--strict', 'exit 2 when publishing fails (default: warn and exit 0)')
    .option('--json', 'print the outcome as JSON')
    .addHelpText(
      'after',
      `
A publishing error never fails the build unless --strict: the dashboard is not worth a red pipeline.

Examples:
  $ flakewatch publish gitlab                      # in GitLab CI: URL, project and token from CI variables
  $ flakewatch publish gitlab --accumulate         # a job without a shared store: grow the published history
  $ flakewatch publish gitlab --days 30 --classification verdict --keep-days 30
  $ flakewatch publish gitlab --url https://gitlab.example.com --project group/app --token "$FLAKE_TOKEN" --file bundle.json`,
    )
    .action(async (opts: PublishCommandOptions) => {
      const { publish, printPublish } = await import('./commands/publish.js')
      const result = await publish(opts, io)
      printPublish(result, opts, io)
      if (!result.ok && opts.strict) throw new ExitError(2, 'publish failed')
    })

  program
    .command('demo')
    .description("try flakewatch without a project: a shop's example reports, the leaderboard, then the dashboard")
    .option('--dir <folder>', 'write the example project here, a new or empty folder (default: a new temporary one)')
    .option('--no-serve', 'stop after the leaderboard (for CI)')
    .option('--host <host>', 'address to listen on (default: 127.0.0.1)')
    .option('--port <port>', 'port to listen on; 0 picks a free one (default: 8080)')
    .addHelpText(
      'after',
      `
The example project is a small Vitest project with flakewatch's config; every example of the README and of
docs/ runs in it as written.

Examples:
  $ npx flakewatch demo
  $ npx flakewatch demo --dir shop --no-serve`,
    )
    .action(async (opts: DemoOptions) => {
      const { demo } = await import('./commands/demo.js')
      const { stoppedBy } = await demo(opts, io)
      if (stoppedBy === 'SIGINT') throw new ExitError(130)
    })

  program
    .command('serve')
    .description('serve the REST API and the web dashboard')
    .option('--db <path|url>', 'SQLite file or postgres:// URL (default: FLAKEWATCH_DB or .flakewatch.db)')
    .option(
      '--read-db <url>',
      "a streaming replica's postgres:// URL: API reads go there, writes to --db (default: FLAKEWATCH_READ_DB)",
    )
    .option('--host <host>', 'address to listen on (default: server.host, 127.0.0.1)')
    .option('--port <port>', 'port to listen on; 0 picks a free one (default: server.port, 8080)')
    .option('--config <file>', 'config file')
    .option('--init', 'create the default store (.flakewatch.db) when it does not exist, instead of stopping')
    .option('--log-requests', 'log every request at info (default: at debug, shown with FLAKEWATCH_LOG_LEVEL=debug)')
    .option(
      '--artifact-days <days>',
      'runs older than this have probably lost their CI artifacts; the heatmap dims them',
      '30',
    )
    .addHelpText(
      'after',
      `
Uploads and quarantine changes need the write token (server.writeToken or FLAKEWATCH_WRITE_TOKEN); without
one they are refused. Reads are open unless a read token is set (server.readToken or FLAKEWATCH_READ_TOKEN).
Logs go to stderr as pino JSON lines at FLAKEWATCH_LOG_LEVEL (default info); requests are logged at debug, or at
info with --log-requests.

Examples:
  $ flakewatch serve
  $ FLAKEWATCH_WRITE_TOKEN=s3cret-token flakewatch serve --host 0.0.0.0 --port 8080
  $ curl -H "Authorization: Bearer $FLAKEWATCH_WRITE_TOKEN" -H 'content-type: application/xml' \\
      --data-binary @junit.xml 'http://127.0.0.1:8080/api/v1/reports?suite=unit&branch=main&env=os=linux'`,
    )
    .action(async (opts: ServeOptions) => {
      // Before the server's modules are loaded: loading them is what first grew the young generation.
      const { keepHeapSmall } = await import('../server/memory-settings.js')
      keepHeapSmall()
      const { serve } = await import('./commands/serve.js')
      const { stoppedBy } = await serve(opts, io)
      if (stoppedBy === 'SIGINT') throw new ExitError(130)
    })

  addRunFlags(
    program
      .command('list')
      .description('print the tests a CI should aim retries at: known flaky, quarantined, or new on this branch')
      .argument('[reports...]', 'with --new: this run’s reports or test list (any format flakewatch reads)')
      .option('--flaky', 'tests whose verdict is flaky')
      .option('--quarantined', 'tests in quarantine')
      .option('--new', 'tests in the given reports that never ran on the default branch (early flake detection)')
      .option('--default-branch <name>', 'the branch that makes a test known (default: defaultBranch, "main")')
      .option('--quarantine-file <file>', 'read quarantines from this file instead of the store')
      .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file')
      .option(PROJECT_FLAG, PROJECT_HELP)
      .addOption(
        new Option('--format <format>', 'lines (test ids), grep (Playwright --grep), test-name (Vitest/Jest -t), json')
          .choices(['lines', 'json', 'grep', 'test-name'])
          .default('lines'),
      )
      .addOption(new Option('--report-format <format>', 'format of the reports (default: detected)').choices(FORMATS))
      .option('-o, --output <file>', 'write to a file'),
  )
    .addHelpText(
      'after',
      `
An empty selection prints a pattern that matches nothing, never an empty one (which would match every test).

Examples:
  $ flakewatch list --flaky --quarantined
  $ npx playwright test --grep "$(flakewatch list --flaky --format grep)" --retries 3
  $ npx vitest run -t "$(flakewatch list --flaky --format test-name)" --retry 3
  $ flakewatch list --new --format json pw-list.json`,
    )
    .action(async (reports: string[], opts: ListCommandOptions) => {
      const { listTests, printList } = await import('./commands/list.js')
      printList(await listTests(reports, opts, io), opts, io)
    })

  addRunFlags(
    addCommentFlags(
      program
        .command('comment')
        .description('post one pull/merge request comment that classifies the run’s failures (updated on each run)')
        .argument('<reports...>', 'this job’s report files, directories or globs')
        .option('--db <path|url>', 'store with the history and quarantines (default: FLAKEWATCH_DB or .flakewatch.db)')
        .option('--quarantine-file <file>', 'read quarantines from this file instead of the store')
        .option('--config <file>', 'config file')
        .addOption(new Option('--format <format>', 'report format (default: detected)').choices(FORMATS))
        .option('--strict', 'exit 2 when the comment cannot be posted (default: warn and exit 0)')
        .option('--dry-run', 'print the comment’s Markdown instead of posting it')
        .option('--json', 'print the outcome as JSON'),
    ),
  )
    .addHelpText(
      'after',
      `
GitHub: REST issue comments on the pull request, with GITHUB_TOKEN, GITHUB_REPOSITORY and the PR number from the
event (GITHUB_EVENT_PATH). GitLab: merge-request notes, with CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID and
FLAKEWATCH_GITLAB_TOKEN (a project access token) or CI_JOB_TOKEN. Never fails the build unless --strict.

Examples:
  $ flakewatch comment 'test-results/*.xml'
  $ flakewatch comment junit.xml --dry-run --server-url https://flakewatch.example.com
  $ flakewatch gate junit.xml --comment`,
    )
    .action(async (reports: string[], opts: CommentCommandOptions & { json?: boolean }) => {
      const { comment, printComment } = await import('./commands/comment.js')
      const outcome = await comment(reports, opts, io)
      printComment(outcome, opts, io)
      if (!outcome.ok && opts.strict) throw new ExitError(2, 'comment not posted')
    })

  const notify = program
    .command('notify')
    .description('send webhooks for test state changes since the last look (never fails a build)')
    .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
    .option('--config <file>', 'config file (webhooks are in notifications.webhooks)')
    .option(PROJECT_FLAG, "this project of the config's projects: its store and webhooks, its key in every payload")
    .option('--as-of <date>', 'judge tests as of this date, like analyze --as-of (default: the newest run)')
    .option('--wait <seconds>', 'how long to wait for retries falling due in this pass', '30')
    .option('--dry-run', 'show the changes without recording or sending anything')
    .option('--json', 'print JSON')
    .option('-o, --output <file>', 'write the output to a file')
    .addHelpText(
      'after',
      `
Events: became_flaky, became_broken, fixed, quarantined, released, quarantine_expiring. The first look records
the state of every test and announces nothing. Deliveries are signed (X-Flakewatch-Signature-256), retried with
backoff, and kept in a log: flakewatch notify log. quarantine auto and serve look for changes too.

Examples:
  $ flakewatch notify
  $ flakewatch notify --dry-run --json
  $ flakewatch notify --project acme/shop
  $ flakewatch notify log --status failed`,
    )
    .action(async (opts: NotifyCommandOptions) => {
      const { notify: run, printNotify } = await import('./commands/notify.js')
      printNotify(await run(opts, io), opts, io)
    })
  notify
    .command('log')
    .description('the webhook delivery log, newest first')
    .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
    .option('--config <file>', 'config file')
    .option(PROJECT_FLAG, PROJECT_HELP)
    .addOption(new Option('--status <status>', 'only these').choices(['pending', 'delivered', 'failed']))
    .option('--webhook <name>', 'only this webhook')
    .option('--limit <n>', 'at most this many (1–1000)', '50')
    .option('--json', 'print JSON')
    .option('-o, --output <file>', 'write the output to a file')
    .action(async (_opts: NotifyLogOptions, cmd: Command) => {
      // `notify` has --db, --config and --json too: commander hands them to whichever command it parses first.
      const opts = cmd.optsWithGlobals<NotifyLogOptions>()
      const { notifyLog, printNotifyLog } = await import('./commands/notify.js')
      printNotifyLog(await notifyLog(opts, io), opts, io)
    })

  const tickets = program
    .command('tickets')
    .description('one ticket per flaky or quarantined test in GitHub, GitLab or Jira: plan, sync, list')
  const ticketSyncOptions = (cmd: Command) =>
    cmd
      .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
      .option('--config <file>', 'config file (the tracker is in tickets)')
      .option(PROJECT_FLAG, "this project of the config's projects: its store and tracker")
      .option('--as-of <date>', 'judge tests as of this date, like analyze --as-of (default: the newest run)')
      .option('--json', 'print JSON')
      .option('-o, --output <file>', 'write the output to a file')
  ticketSyncOptions(
    tickets
      .command('sync')
      .description('open, comment on and close tickets as the tests\u2019 states changed; exit 1 if a ticket failed')
      .option('--dry-run', 'show what would be done without recording anything or calling the tracker'),
  )
    .addHelpText(
      'after',
      `
A ticket opens when a test becomes flaky or is quarantined (tickets.openOn), gets a comment when the test fails
again, and closes when it is released or fixed. Tokens come from FLAKEWATCH_GITHUB_TOKEN (or GITHUB_TOKEN),
FLAKEWATCH_GITLAB_TOKEN, or FLAKEWATCH_JIRA_TOKEN and FLAKEWATCH_JIRA_EMAIL. serve does the same on its
notification interval. docs/tickets.md has the set-up.

Examples:
  $ flakewatch tickets sync
  $ flakewatch tickets sync --dry-run --json
  $ flakewatch tickets list`,
    )
    .action(async (_opts: TicketsCommandOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<TicketsCommandOptions>()
      const { ticketsSync, printTickets } = await import('./commands/tickets.js')
      const outcome = await ticketsSync(opts, io)
      printTickets(outcome, opts, io)
      if (outcome.sync?.failed) throw new ExitError(1, `${outcome.sync.failed} ticket(s) failed`)
    })
  ticketSyncOptions(
    tickets
      .command('plan')
      .description('what tickets sync would do now, without recording anything or calling the tracker'),
  ).action(async (_opts: TicketsCommandOptions, cmd: Command) => {
    const opts = { ...cmd.optsWithGlobals<TicketsCommandOptions>(), dryRun: true }
    const { ticketsSync, printTickets } = await import('./commands/tickets.js')
    printTickets(await ticketsSync(opts, io), opts, io)
  })
  tickets
    .command('list')
    .description('each test\u2019s ticket: what it should be, what the tracker has, the last error')
    .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
    .option('--config <file>', 'config file')
    .option(PROJECT_FLAG, PROJECT_HELP)
    .option('--limit <n>', 'at most this many (1–1000)', '50')
    .option('--json', 'print JSON')
    .option('-o, --output <file>', 'write the output to a file')
    .action(async (_opts: TicketsListOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<TicketsListOptions>()
      const { ticketsList, printTicketsList } = await import('./commands/tickets.js')
      printTicketsList(await ticketsList(opts, io), opts, io)
    })

  program
    .command('mcp')
    .description(
      'serve flakewatch to AI agents over MCP (stdio): list, explain and triage tests, quarantine, set-up plans',
    )
    .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
    .option('--config <file>', 'config file')
    .option(PROJECT_FLAG, PROJECT_HELP)
    .option('--read-only', 'refuse the tools that write (quarantine_test, release_test)')
    .option('--actor <name>', 'who quarantines and releases are audited as (default: CI user or $USER)')
    .addHelpText(
      'after',
      `
An MCP client starts it and talks JSON-RPC over stdin and stdout (docs/mcp.md has the set-up for Claude Code,
Cursor, VS Code and Gemini CLI). A team server serves the same tools at /mcp (flakewatch serve).

Examples:
  $ claude mcp add flakewatch -- npx flakewatch mcp
  $ flakewatch mcp --read-only --db .flakewatch.db`,
    )
    .action(async (opts: McpCommandOptions) => {
      const { mcp } = await import('./commands/mcp.js')
      await mcp(opts, io)
    })

  const audit = program
    .command('audit')
    .description('check the audit chain of every audited action (quarantines, rules) and print its head')
  audit
    .command('verify')
    .description(
      'check the audit chain: every entry’s hash and link, that it ends where the store recorded, and that it passes through an anchored head (exit 1 when not)',
    )
    .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
    .option('--config <file>', 'config file')
    .option(PROJECT_FLAG, PROJECT_HELP)
    .option(
      '--expect <head>',
      'a head printed earlier by `audit head` (<count>:<hash>) that the chain must pass through',
    )
    .option('--json', 'print JSON')
    .option('--output <file>', 'write the output to a file')
    .addHelpText(
      'after',
      `\nExamples:\n  $ flakewatch audit verify\n  $ flakewatch audit verify --expect "$(cat audit-head.txt)"\n  $ flakewatch audit verify --db postgres://app@db/flakewatch --json`,
    )
    .action(async (opts: AuditVerifyOptions) => {
      const { auditVerify, printAuditVerify } = await import('./commands/audit.js')
      const result = await auditVerify(opts, io)
      printAuditVerify(result, opts, io)
      if (!result.ok) throw new ExitError(1)
    })
  audit
    .command('head')
    .description('print the audit chain’s head (<count>:<last hash>), to keep outside the store and check later')
    .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
    .option('--config <file>', 'config file')
    .option(PROJECT_FLAG, PROJECT_HELP)
    .option('--json', 'print JSON')
    .option('--output <file>', 'write the output to a file')
    .addHelpText('after', `\nExamples:\n  $ flakewatch audit head\n  $ flakewatch audit head --output audit-head.txt`)
    .action(async (opts: AuditHeadOptions) => {
      const { auditHead, printAuditHead } = await import('./commands/audit.js')
      printAuditHead(await auditHead(opts, io), opts, io)
    })

  program
    .command('heals')
    .description('list self-healed Playwright locators with the locator to put in the test instead')
    .option('--db <path|url>', 'store (default: FLAKEWATCH_DB or .flakewatch.db)')
    .option('--config <file>', 'config file (with --project)')
    .option(PROJECT_FLAG, PROJECT_HELP)
    .option('--test <test-id>', 'only heals of this test')
    .option('--json', 'print JSON')
    .addHelpText('after', `\nExamples:\n  $ flakewatch heals\n  $ flakewatch heals --json > heals.json`)
    .action(async (opts: StoreFlags & { test?: string; json?: boolean }) => {
      const { heals, printHeals } = await import('./commands/heals.js')
      const { openStore } = await import('../store/open.js')
      const { projectStoreFlags } = await import('./project-option.js')
      const { db } = projectStoreFlags(opts, io.env)
      const store = await openStore({ db, env: io.env, mustExist: true, createFolder: false, readOnly: true })
      try {
        printHeals(await heals({ store, json: opts.json, testId: opts.test }), opts, io.stdout)
      } finally {
        await store.close()
      }
    })

  return program
}
