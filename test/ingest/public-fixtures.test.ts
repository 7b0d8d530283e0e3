import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ReportParseError } from '../../src/errors.js'
import { FORMATS, parseReport, sourceFromFile } from '../../src/ingest/index.js'
import { parseJunit } from '../../src/ingest/junit.js'
import type { ParsedReport } from '../../src/ingest/types.js'
import { PUBLIC_FIXTURES } from '../helpers/fixtures.js'
import { caseNamed, countByStatus, summarize } from './helpers.js'

const FIXTURES = PUBLIC_FIXTURES

const statuses = (r: ParsedReport) => countByStatus(r.cases)

/**
 * What each public fixture must give. Every file in the fixtures folder needs an entry, so a fixture added
 * later fails this test until someone writes down what it should yield.
 */
const FACTS: Record<string, (r: ParsedReport) => void | Promise<void>> = {
  'cucumber-json/cucumber-jvm-7.2.3-scenario-outline.json': (r) => {
    expect(r.format).toBe('cucumber-json')
    // Three rows of one outline named "S1": each is told apart by its example row's line.
    expect(r.cases.map((c) => [c.name, c.status])).toEqual([
      ['S1 (line 8)', 'passed'],
      ['S1 (line 9)', 'failed'],
      ['S1 (line 10)', 'skipped'],
    ])
    // file:///…/cucumber-jvm/7.2.3/../../features/x.feature: the file: scheme and the ../ are resolved.
    expect(r.cases[0]!.module).toBe(
      '/Users/Aslak.Hellesoy/git/cucumber/cucumber-json-testdata-generator/testdata/features/scenario-outline.feature',
    )
    expect(caseNamed(r, 'S1 (line 9)').message).toBe('java.lang.RuntimeException: this step failed')
    expect(caseNamed(r, 'S1 (line 9)').stack).toMatch(/Stepdefs\.java:32/)
    expect(caseNamed(r, 'S1 (line 10)').message).toBe('io.cucumber.java.PendingException: TODO: implement me')
    expect(r.meta.startedAt).toBe('2022-03-22T15:16:15.745Z')
  },
  'cucumber-json/cucumber-jvm-7.2.3-failing-background-with-two-scenarios.json': (r) => {
    // Cucumber-JVM writes the Background as an element before each scenario: its failure fails that scenario.
    expect(r.cases.map((c) => [c.name, c.status, c.message])).toEqual([
      ['S1', 'failed', 'java.lang.RuntimeException: this step failed'],
      ['S2', 'failed', 'java.lang.RuntimeException: this step failed'],
    ])
  },
  'cucumber-json/cucumber-jvm-7.2.3-failing-before-hook.json': (r) => {
    expect(r.cases).toEqual([
      expect.objectContaining({
        name: 'S1',
        status: 'failed',
        message: 'java.lang.RuntimeException: failing before hook',
      }),
    ])
  },
  'cucumber-json/cucumber-jvm-7.2.3-failing-passing-pending-scenarios.json': (r) => {
    // Three scenarios without a name in one file: each by its line.
    expect(r.cases.map((c) => [c.name, c.status])).toEqual([
      ['(line 2)', 'failed'],
      ['(line 5)', 'passed'],
      ['(line 9)', 'skipped'],
    ])
  },
  'cucumber-json/cucumber-js-7.3.2-scenario-outline.json': (r) => {
    // cucumber-js 7 wrote the outline's own line for every row: the rows are numbered in report order.
    expect(r.cases.map((c) => [c.module, c.name, c.status])).toEqual([
      ['../../features/scenario-outline.feature', 'S1', 'passed'],
      ['../../features/scenario-outline.feature', 'S1 #2', 'failed'],
      ['../../features/scenario-outline.feature', 'S1 #3', 'skipped'],
    ])
    expect(caseNamed(r, 'S1 #2').message).toBe('Error: this step failed')
  },
  'pytest-json/pytest-json-report-sample.json': (r) => {
    expect(r.format).toBe('pytest-json')
    expect(r.cases.map((c) => [c.module, c.name, c.status])).toEqual([
      ['test_create_report', 'test_pass', 'passed'],
      ['test_create_report', 'test_fail_with_fixture', 'failed'],
      ['test_create_report', 'test_xfail', 'skipped'],
      ['test_create_report', 'test_xfail_but_passing', 'passed'],
      ['test_create_report', 'test_fail_during_setup', 'error'],
      ['test_create_report', 'test_fail_during_teardown', 'error'],
      ['test_create_report', 'test_skip', 'skipped'],
      ['test_create_report', 'test_fail_nested', 'failed'],
      ['test_create_report', 'test_parametrized[1]', 'passed'],
      ['test_create_report', 'test_parametrized[2]', 'failed'],
    ])
    // A teardown failure after a passing call: the teardown says why.
    expect(caseNamed(r, 'test_fail_during_teardown').stack).toMatch(/teardown|assert/)
    expect(caseNamed(r, 'test_skip').message).toBe('testing skip')
    expect(r.meta).toMatchObject({ finishedAt: '2019-01-22T19:25:51.260Z', durationMs: 45.891 })
  },
  'pytest-json/crypto-bot-class-failures.json': (r) => {
    // A project's own run (pytest-json-report on Python 3.12, one line, as the plugin writes it): 131 tests in
    // unittest-style classes, 7 failing in their call phase.
    expect(r.format).toBe('pytest-json')
    expect(statuses(r)).toEqual({ passed: 124, failed: 7 })
    const failed = r.cases.filter((c) => c.status === 'failed')
    expect(failed.map((c) => `${c.module} :: ${c.name}`)).toEqual([
      'tests.test_coinbase_client.TestCoinbaseClient :: test_get_product_error_handling',
      'tests.test_coinbase_client.TestCoinbaseClient :: test_get_product_error_handling_retry',
      'tests.test_main.TestMainModule :: test_run_bot_asset_processing_error_continues',
      'tests.test_main.TestMainModule :: test_run_bot_client_initialization_failure',
      'tests.test_main.TestMainModule :: test_run_bot_success',
      'tests.test_trade_manager.TestTradeManager :: test_handle_filled_buy_order_places_new_sell_orders',
      'tests.test_trade_manager.TestTradeManager :: test_process_cycle_handles_no_config',
    ])
    for (const c of r.cases) expect(c.attempts, c.name).toHaveLength(1)
    const slow = caseNamed(r, 'test_get_product_error_handling')
    // The message is the crash line pytest printed (its "E" lines), the stack ends at the failing assertion.
    expect(slow.message).toMatch(/^AssertionError: expected call not found\.\nExpected: error\('Assertion failed/)
    expect(slow.stack).toMatch(/tests\/test_coinbase_client\.py:64: AssertionError$/)
    expect(slow.file).toBe('tests/test_coinbase_client.py')
    // Setup, call and teardown add up: a 10 s call.
    expect(slow.durationMs).toBeGreaterThan(10_000)
    expect(slow.durationMs).toBeLessThan(10_100)
    expect(caseNamed(r, 'test_get_product_error_handling_retry').message).toBe(
      "AttributeError: 'TestCoinbaseClient' object has no attribute 'mock_rest_client'. Did you mean: 'mock_rest_client_class'?",
    )
    expect(r.meta).toMatchObject({ finishedAt: '2025-06-26T20:08:16.033Z', durationMs: 15166.577 })
  },
  'pytest-json/pythonbasictools-xdist-windows.json': (r) => {
    // pytest-xdist on Windows: every phase of every passing test carries the worker line ("[gw1] win32 -- Python
    // 3.10.11 E:\…") as its longrepr. A passing test has no message, and parametrized ids stay whole.
    expect(r.format).toBe('pytest-json')
    expect(statuses(r)).toEqual({ passed: 12 })
    for (const c of r.cases) {
      expect(c.message ?? null, c.name).toBeNull()
      expect(c.stack ?? null, c.name).toBeNull()
      expect(c.file, c.name).toMatch(/^tests\/[\w/]+\.py$/)
    }
    expect(caseNamed(r, 'test_inherit_docstring').module).toBe('tests.docstring.test_docstring.TestDocstring')
    expect(
      caseNamed(r, 'test_dict_of_lists_to_list_of_dicts_with_handmade_data[inputs1-expected_output1]').module,
    ).toBe('tests.test_collections_tools.test_dict_of_lists_to_list_of_dicts')
    expect(r.meta).toMatchObject({ finishedAt: '2025-06-27T02:53:43.900Z', durationMs: 3689.353 })
  },
  'bazel-bep/runs-per-test-flaky.json': async (r) => {
    expect(r.format).toBe('bazel-bep')
    // --runs_per_test=2 --runs_per_test_detects_flakes: one target failed its first run and passed its second.
    expect(r.cases.map((c) => [c.name, c.status, c.flakyOnRetry, c.attempts.map((a) => a.status).join(',')])).toEqual([
      ['go/cmd/geninter/geninter_test', 'passed', true, 'failed,passed'],
      ['go/pkg/alfred/alfred_test', 'passed', false, 'passed,passed'],
      ['go/cmd/geninter/testpkg/testpkg_test', 'passed', false, 'passed,passed'],
    ])
    const flaky = caseNamed(r, 'go/cmd/geninter/geninter_test')
    expect(flaky.module).toBe(flaky.name)
    expect(flaky.attempts.map((a) => a.durationMs)).toEqual([170, 191])
    expect(flaky.message).toMatch(/^FAILED; test log: file:\/\/.*run_1_of_2\/test\.log$/)
    expect(r.meta).toMatchObject({
      runId: '568bb130-9336-43d7-aa17-802de275e5ee',
      startedAt: '2024-05-24T12:43:28.602Z',
      finishedAt: '2024-05-24T12:43:29.039Z',
      durationMs: 437,
      runnerId: 'yle',
    })
    // Bazel's own test.xml for a test that writes none names the target the same way: one id for both files.
    const xml = await parseReport(sourceFromFile(join(FIXTURES, 'bazel/suite-logs-test.xml')))
    expect(xml.cases[0]).toMatchObject({ module: 'bazel/failing_absl_test', name: 'bazel/failing_absl_test' })
  },
  'go-json/dorny-golang.json': (r) => {
    expect(r.format).toBe('go-json')
    expect(statuses(r)).toEqual({ passed: 5, failed: 6, skipped: 1 })
    const pkg = '_/home/james_t/git/test-reporter/reports/go'
    expect(r.cases.every((c) => c.module === pkg)).toBe(true)
    expect(caseNamed(r, 'TestCases/2_+_3_=_4')).toMatchObject({
      status: 'failed',
      message: 'calculator_test.go:67: expected 2 + 3 = 4, got 5',
    })
    expect(caseNamed(r, 'TestPanicInsideTest').stack).toMatch(/caught panic: bad stuff/)
    expect(caseNamed(r, 'TestSkipped')).toMatchObject({
      status: 'skipped',
      message: 'calculator_test.go:45: skipping test',
    })
    expect(r.meta).toMatchObject({ startedAt: '2025-04-22T13:59:55.364Z', finishedAt: '2025-04-22T13:59:59.505Z' })
  },
  'mocha-json/dorny-mocha.json': (r) => {
    expect(r.format).toBe('mocha-json')
    expect(statuses(r)).toEqual({ passed: 1, failed: 4, skipped: 1 })
    expect(caseNamed(r, 'Timeout test')).toMatchObject({
      module: 'C:/Users/Michal/Workspace/dorny/test-reporter/reports/mocha/test/second.test.js',
      status: 'failed',
      errorType: 'timeout',
    })
    expect(caseNamed(r, 'Test 1 Test 1.1 Failing test').message).toMatch(/^Expected values to be strictly equal:/)
    expect(caseNamed(r, 'Skipped test').status).toBe('skipped')
    expect(r.meta).toMatchObject({ startedAt: '2021-02-24T20:26:09.297Z', durationMs: 12 })
  },
  'mocha-json/mocha-repo-results.json': (r) => {
    expect(r.format).toBe('mocha-json')
    // 839 entries; two tests are listed twice under one file and title, and fold into two attempts each.
    expect(statuses(r)).toEqual({ passed: 831, skipped: 6 })
    expect(r.cases.filter((c) => c.attempts.length === 2)).toHaveLength(2)
    expect(r.cases.filter((c) => c.flakyOnRetry)).toEqual([])
  },
  'rspec-json/dorny-rspec.json': (r) => {
    expect(r.format).toBe('rspec-json')
    expect(statuses(r)).toEqual({ passed: 1, failed: 1, skipped: 1 })
    const failed = r.cases.find((c) => c.status === 'failed')!
    expect(failed).toMatchObject({
      module: 'spec/config/check_env_vars_spec.rb',
      file: 'spec/config/check_env_vars_spec.rb',
      errorType: 'RSpec::Mocks::MockExpectationError',
    })
    expect(failed.name).toMatch(/^CheckEnvVars#call when all env vars are defined/)
    expect(r.meta.durationMs).toBe(191.184)
  },
  'nunit/dotnet-nunit3-console.xml': (r) => {
    expect(r.format).toBe('nunit')
    expect(statuses(r)).toEqual({ passed: 3, failed: 3, error: 2, skipped: 1 })
    const cls = 'DotnetTests.XUnitTests.CalculatorTests'
    expect(r.cases.every((c) => c.module === cls)).toBe(true)
    // label="Error": an unexpected exception, not a failed assertion.
    expect(caseNamed(r, 'Exception_In_TargetTest')).toMatchObject({
      status: 'error',
      errorType: 'System.DivideByZeroException',
      message: 'System.DivideByZeroException : Attempted to divide by zero.',
    })
    expect(caseNamed(r, 'Exception_In_TargetTest').stack).toMatch(/at DotnetTests\.Unit\.Calculator\.Div/)
    expect(caseNamed(r, 'Is_Even_Number(3)').status).toBe('failed')
    expect(caseNamed(r, 'Is_Even_Number(2)').status).toBe('passed')
    expect(caseNamed(r, 'Skipped_Test')).toMatchObject({ status: 'skipped', message: 'Skipped' })
    expect(r.meta).toMatchObject({ runnerId: 'DORNY-PC', startedAt: '2021-06-28T20:23:41.000Z', durationMs: 230.308 })
  },
  'nunit/dotnet-nunit3-console.nunit3-junit.xml': async (r) => {
    // The same run as JUnit, through NUnit's own nunit3-junit.xslt (what `--result=…;transform=` applies): one id
    // per test in both. The transform drops label="Error", so exceptions read as failures there.
    expect(r.format).toBe('junit')
    const nunit = await parseReport(sourceFromFile(join(FIXTURES, 'nunit/dotnet-nunit3-console.xml')))
    const ids = (x: ParsedReport) => x.cases.map((c) => `${c.module}::${c.name}`).sort()
    expect(ids(r)).toEqual(ids(nunit))
    expect(r.cases).toHaveLength(9)
    expect(statuses(r)).toEqual({ passed: 3, failed: 5, skipped: 1 })
  },
  'nunit/nunit3-mock-assembly.xml': (r) => {
    expect(r.format).toBe('nunit')
    expect(r.cases.length).toBeGreaterThan(10)
    expect(caseNamed(r, 'FailingTest')).toMatchObject({
      module: 'NUnit.Tests.Assemblies.MockTestFixture',
      status: 'failed',
      message: 'Intentional failure',
    })
    expect(r.meta.runnerId).toBe('CHARLIE-LAPTOP')
  },
  'nunit/nunit3-adapter-assembly.xml': (r) => {
    expect(r.format).toBe('nunit')
    // label="Error" on nine of the ten failures: exceptions, not assertions.
    expect(statuses(r)).toEqual({ passed: 13, failed: 1, error: 9 })
    expect(r.cases.every((c) => c.module.startsWith('MyProject.Tests.Real.'))).toBe(true)
  },
  'xunit/xunit-2.0-console.xml': (r) => {
    expect(r.format).toBe('xunit')
    expect(r.cases.map((c) => [c.module, c.name, c.status])).toEqual([
      ['MyProject.Tests.SampleFact', 'FailedTest', 'failed'],
      ['MyProject.Tests.SampleFact', 'SuccessfulTest', 'passed'],
      ['MyProject.Tests.SampleFact', 'SkippedTest', 'skipped'],
    ])
    expect(caseNamed(r, 'FailedTest')).toMatchObject({
      errorType: 'Xunit.Sdk.TrueException',
      message: 'Assert.True() Failure',
      durationMs: 14,
    })
    expect(caseNamed(r, 'FailedTest').stack).toMatch(/SampleFact\.cs:line 16$/)
    expect(caseNamed(r, 'SkippedTest').message).toBe('On Purpose')
    expect(r.meta).toMatchObject({ startedAt: '2014-12-18T14:34:32.000Z', durationMs: 288 })
  },
  'bazel/suite-logs-test.xml': (r) => {
    expect(r.format).toBe('junit')
    expect(r.cases).toHaveLength(1)
    // status="run" decides nothing; the <error> child does. No classname or file: the suite names the module.
    expect(r.cases[0]).toMatchObject({
      module: 'bazel/failing_absl_test',
      name: 'bazel/failing_absl_test',
      status: 'error',
      message: 'exited with error code 1',
      durationMs: 0,
    })
  },
  'cargo-nextest/basic.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 2, failed: 1 })
    const failure = caseNamed(r, 'test_failure')
    expect(failure.module).toBe('oxidized_navigation::parry3d')
    expect(failure.message).toMatch(/^thread 'test_failure' panicked at tests\/parry3d.rs:154:5:/)
    expect(failure.errorType).toBeNull()
    expect(r.meta).toMatchObject({ startedAt: '2024-12-02T20:06:10.512Z', durationMs: 946 })
  },
  'ctrf/jest-ctrf-github-test-reporter.json': (r) => {
    expect(r.format).toBe('ctrf')
    expect(statuses(r)).toEqual({ passed: 65 })
    expect(r.meta).toMatchObject({
      branch: 'chore/add-previous-tests',
      // CTRF's build is the job: stored as the job, never as the pipeline.
      jobId: '16604526985',
      jobUrl: 'https://github.com/ctrf-io/github-test-reporter/actions/runs/16604526985#summary',
      startedAt: '2025-07-29T18:38:21.032Z',
      durationMs: 12677,
    })
    expect(r.meta.pipelineId).toBeUndefined()
    // jest-ctrf-json-reporter: suite "file name > describe titles", name the full name joined by spaces. The file
    // becomes the module and the describe titles join the name with Jest's separator, as in Jest's other reports.
    const c = caseNamed(r, 'String Helpers › splitLines › should split lines correctly for multiline strings')
    expect(c.module).toBe('__tests__/handlebars/string.test.ts')
    // It lacks reportFormat and specVersion: one warning names them.
    expect(r.warnings).toEqual([expect.stringMatching(/^not schema-valid CTRF: reportFormat, specVersion missing/)])
    // The GitHub Actions checkout root is dropped, so ids do not depend on the runner's workspace path.
    expect(c.file).toBe('__tests__/handlebars/string.test.ts')
  },
  'ctrf/playwright-ctrf-flaky-project.json': (r) => {
    expect(statuses(r)).toEqual({ passed: 5, failed: 5 })
    // suite "chromium > file > describe": the project is a facet, the describe title part of the name.
    const timedOut = caseNamed(
      r,
      'FriedHats Coffee Purchase Flow - Realistic Flaky Tests › flaky test - state dependency issues',
    )
    expect(r.cases.every((c) => c.env?.project === 'chromium')).toBe(true)
    expect(timedOut).toMatchObject({
      status: 'failed',
      errorType: 'timeout',
      message: 'Test timeout of 30000ms exceeded.',
    })
    expect(r.cases.filter((c) => c.errorType === 'timeout')).toHaveLength(1)
  },
  'ctrf/playwright-ctrf-repeat-same-name.json': (r) => {
    // Ten entries with one identity (repeat-each): one result with ten failed attempts.
    expect(r.cases).toHaveLength(1)
    const [c] = r.cases
    expect(c).toMatchObject({ status: 'failed', flakyOnRetry: false })
    expect(c!.name).toBe(
      'Coffee Purchase Flow - Stable Tests › Should complete full coffee purchase flow with validation',
    )
    expect(c!.attempts.map((a) => a.retry)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(c!.attempts.every((a) => a.status === 'failed')).toBe(true)
    expect(c!.attempts[0]!.durationMs).toBe(11225)
  },
  'cypress/mocha-junit-results.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 4, failed: 2 })
    // mocha-junit-reporter: "Root Suite" carries the file for the describe suites after it; classname is the title.
    expect(caseNamed(r, 'free crm app login')).toMatchObject({
      module: 'cypress/integration/tests/login.spec.js',
      status: 'failed',
      errorType: 'CypressError',
    })
    expect(caseNamed(r, 'verify the title').module).toBe('cypress/integration/tests/crossorigin.spec.js')
    expect(caseNamed(r, 'different commands of get and find verify the tittle for google').errorType).toBe('TypeError')
  },
  'dotnet-junit-logger/TestResults.xml': (r) => {
    // Starts with a UTF-8 BOM.
    expect(statuses(r)).toEqual({ passed: 32, failed: 14, skipped: 6 })
    expect(r.meta.runnerId).toBeUndefined() // hostname="REDACTED" identifies nothing
    const c = caseNamed(r, 'TestData(2,"A")', 'JUnit.Xml.TestLogger.NetFull.Tests.ParametrizedTestCases')
    expect(c.status).toBe('failed')
    expect(c.message).toBe('failing for second case\n  Expected: not equal to 2\n  But was:  2')
    expect(caseNamed(r, 'TestD', 'JUnit.Xml.TestLogger.NetFull.Tests.FailingOneTimeTearDown').durationMs).toBe(2.195)
  },
  'dotnet-trx/xunit-dotnet.trx': (r) => {
    expect(r.format).toBe('trx')
    expect(statuses(r)).toEqual({ passed: 5, failed: 5, skipped: 1 })
    expect(caseNamed(r, 'Skipped_Test').status).toBe('skipped') // NotExecuted
    expect(caseNamed(r, 'Should be even number(i: 3)')).toMatchObject({
      module: 'DotnetTests.XUnitTests.CalculatorTests',
      status: 'failed',
      message: 'Assert.True() Failure\nExpected: True\nActual:   False',
      durationMs: 0.654,
    })
    expect(caseNamed(r, 'Exception_In_TargetTest').stack).toMatch(/^at DotnetTests\.Unit\.Calculator\.Div/)
    expect(r.meta).toMatchObject({ runnerId: 'DORNY-PC', startedAt: '2021-04-20T06:31:31.986Z', durationMs: 1116 })
  },
  'dotnet-trx/xunit-v3.trx': (r) => {
    expect(statuses(r)).toEqual({ passed: 1, failed: 3 })
    expect(caseNamed(r, 'Failing_Test').module).toBe('DotnetTests.XUnitV3Tests.FixtureTests')
    // No class on cleanup failures: they belong to the test assembly.
    const cleanup = caseNamed(r, '[Test Class Cleanup Failure (DotnetTests.XUnitV3Tests.FixtureTests.Passing_Test)]')
    expect(cleanup.module).toBe('DotnetTests.XUnitV3Tests')
    expect(r.meta.startedAt).toBe('2025-06-22T14:17:11.756Z')
  },
  'ginkgo/ginkgo-junit-report.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 2, failed: 1 })
    expect(r.cases.filter((c) => c.name === '[It] Should succeed').map((c) => c.module)).toEqual(['Suite1', 'Suite2'])
    const failed = caseNamed(r, '[It] Should succeed, but errors')
    expect(failed.message).toMatch(/^Expected success, but got an error:/)
    expect(failed.errorType).toBeNull() // type="failed" names no error class
  },
  'go-junit-report/go-junit-report.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 2, failed: 2, skipped: 1 })
    expect(caseNamed(r, 'TestPackage3-1')).toMatchObject({ message: 'Failed', stack: 'Just error here' })
    expect(caseNamed(r, 'TestPackage3-3')).toMatchObject({ status: 'skipped', message: 'Skipped' })
    expect(r.meta).toMatchObject({ runnerId: 'MBP.local', startedAt: '2022-10-13T21:53:32.000Z' })
  },
  'gotestsum/junitxml-report.xml': (r) => {
    expect(r.cases).toHaveLength(60)
    expect(statuses(r)).toEqual({ passed: 42, failed: 13, skipped: 5 })
    // The same test name in three packages is three tests, not three attempts.
    expect(r.cases.filter((c) => c.name === 'TestWithStderr')).toHaveLength(3)
    expect(r.cases.every((c) => c.attempts.length === 1)).toBe(true)
    // classname="" on TestMain: the package (suite) is the module.
    expect(caseNamed(r, 'TestMain')).toMatchObject({
      module: 'gotest.tools/gotestsum/testjson/internal/badmain',
      status: 'failed',
    })
    expect(r.meta.startedAt).toBeUndefined() // 0001-01-01 is a placeholder
  },
  'gradle/TEST-com.github.guenhter.junit.CalculatorTest.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 24 })
    expect(caseNamed(r, '[1] 1, 2, 3').module).toBe('com.github.guenhter.junit.CalculatorTest')
    expect(r.meta).toMatchObject({ runnerId: 'pcs', startedAt: '2023-01-11T08:51:38.000Z', durationMs: 65 })
  },
  'gradle/TEST-com.github.guenhter.junit.TwoExtensionsTest1.xml': (r) => {
    expect(r.cases).toHaveLength(1)
    expect(r.cases[0]).toMatchObject({ name: 'it is true()', status: 'passed', message: null, stack: null })
  },
  'jest-json/payfave-jest-results.json': (r) => {
    expect(r.format).toBe('jest-json')
    expect(statuses(r)).toEqual({ passed: 1, failed: 3, skipped: 9 })
    const failed = r.cases.filter((c) => c.status === 'failed')
    // /home/vsts/work/1/s/ is an Azure Pipelines checkout: ids must not change with the agent's work folder.
    expect(new Set(r.cases.map((c) => c.module))).toContain('src/ws/winktoken.route.spec.ts')
    expect(failed[0]!.name).toMatch(/^Route \/ws_winktoken › Positive Test Cases › WS wss:.* › Should return type 10 /)
    expect(failed[0]!.message).toMatch(/^Error: expect\(received\)\.toBe\(expected\)/)
    expect(r.cases.filter((c) => c.status === 'skipped').every((c) => c.durationMs === null)).toBe(true)
    expect(r.meta.startedAt).toBe('2022-07-06T19:03:46.792Z')
  },
  'jest-junit/jest-junit-nested-describe.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 1, failed: 4, skipped: 1 })
    // jest-junit: the suite is the file, classname the describe path.
    expect(caseNamed(r, 'Test 1 › Test 1.1 › Failing test')).toMatchObject({
      module: '__tests__\\main.test.js',
      message: 'Error: expect(received).toBeTruthy()\n\nReceived: false',
    })
    expect(caseNamed(r, 'Timeout test').module).toBe('__tests__\\second.test.js')
  },
  'jest-junit/jest-repo-4239-tests.xml': async (r) => {
    const raw = await parseJunit(sourceFromFile(join(FIXTURES, 'jest-junit/jest-repo-4239-tests.xml')))
    expect(raw.cases).toHaveLength(4239)
    expect(countByStatus(raw.cases)).toEqual({ passed: 4207, failed: 2, skipped: 30 })
    // 97 cases share an identity with another in the same file (test.each titles, repeated describes): they
    // become attempts, so every attempt is kept and every test id is unique.
    expect(r.cases).toHaveLength(4142)
    expect(r.cases.reduce((n, c) => n + c.attempts.length, 0)).toBe(4239)
    const repeated = caseNamed(r, 'concurrent › should add 1 to number')
    expect(repeated.attempts.map((a) => a.status)).toEqual(['passed', 'passed', 'passed'])
    expect(repeated).toMatchObject({ status: 'passed', flakyOnRetry: false })
    expect(r.cases.filter((c) => c.status === 'failed')).toHaveLength(2)
  },
  'maven-surefire/TEST-action.surefire.report.email.EmailAddressTest.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 2, failed: 2, error: 5 })
    expect(caseNamed(r, 'shouldNotContainInternationalizedHostNames')).toMatchObject({
      status: 'error',
      errorType: 'action.surefire.report.email.InvalidEmailAddressException',
      message: "Invalid email address 'user@ñandú.com.ar'",
    })
    expect(caseNamed(r, 'shouldBeStricterThanRfc2821').message).toBe("Invalid email address 😋 'Abc\\@def@example.com'")
  },
  'maven-surefire/TEST-io.olamy.AlwaysFailTest.xml': (r) => {
    // <failure> plus three <rerunFailure>: four attempts, every one failed, and no pass-on-retry.
    expect(r.cases).toHaveLength(1)
    const [c] = r.cases
    expect(c).toMatchObject({ module: 'io.olamy.AlwaysFailTest', status: 'failed', flakyOnRetry: false })
    expect(c!.attempts.map((a) => [a.retry, a.status])).toEqual([
      [0, 'failed'],
      [1, 'failed'],
      [2, 'failed'],
      [3, 'failed'],
    ])
    expect(c!.attempts.every((a) => a.message === 'built to fail')).toBe(true)
    expect(c!.attempts[3]!.stack).toMatch(/^junit\.framework\.AssertionFailedError: built to fail/)
  },
  'maven-surefire/TEST-io.olamy.FlakyTest.xml': (r) => {
    // Two <flakyFailure> then the passing run: three attempts, passed on retry.
    expect(r.cases).toHaveLength(1)
    const [c] = r.cases
    expect(c).toMatchObject({ status: 'passed', flakyOnRetry: true, message: 'try one more time maybe' })
    expect(c!.attempts.map((a) => [a.status, a.message])).toEqual([
      ['failed', 'obvious fail'],
      ['failed', 'try one more time maybe'],
      ['passed', null],
    ])
    expect(c!.attempts[0]!.stack).toMatch(/^junit\.framework\.AssertionFailedError: obvious fail\n\tat /)
  },
  'mocha-xunit/latex-utensils.xml': async (r) => {
    // No XML declaration, no <testsuites>, an RFC 1123 timestamp, repeated names.
    const raw = await parseJunit(sourceFromFile(join(FIXTURES, 'mocha-xunit/latex-utensils.xml')))
    expect(raw.cases).toHaveLength(109)
    expect(r.cases).toHaveLength(101)
    expect(caseNamed(r, 'parse entry with command').attempts).toHaveLength(2)
    expect(statuses(r)).toEqual({ passed: 101 })
    expect(r.meta).toMatchObject({ startedAt: '2022-12-03T23:10:07.000Z', durationMs: 290 })
  },
  'nosetests/nosetests-27449.xml': (r) => {
    expect(r.cases).toEqual([
      expect.objectContaining({
        module: 'TestConsultationAcceptance.ConsultationCreationAcceptance',
        name: 'testConsultationAcceptance',
        status: 'passed',
        durationMs: 157980,
      }),
    ])
  },
  'phpunit/phpunit-nested-suites.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 10, failed: 2 })
    const nested = caseNamed(r, 'testCollectsDispatchedEventsUntilFlushed')
    expect(nested.module).toBe('PHPUnit.Event.CollectingDispatcherTest')
    expect(nested.file).toBe('/home/matteo/OSS/phpunit/tests/unit/Event/Dispatcher/CollectingDispatcherTest.php')
    // .phpt cases have no classname: the file is the module.
    const phpt = caseNamed(r, 'targeting-traits-with-coversclass-attribute-is-deprecated.phpt')
    expect(phpt.module).toBe(phpt.file)
    expect(phpt.module).toMatch(/\/tests\/end-to-end\/metadata\/targeting-traits-with-coversclass-[\w-]+\.phpt$/)
    expect(phpt.errorType).toBe('PHPUnit\\Framework\\PhptAssertionFailedError')
  },
  'playwright-json/aerchain-results.json': (r) => {
    expect(r.format).toBe('playwright-json')
    expect(statuses(r)).toEqual({ passed: 1, failed: 1 })
    expect(caseNamed(r, 'Login and save session')).toMatchObject({ module: 'auth.setup.js', env: { project: 'setup' } })
    const timedOut = caseNamed(r, 'Aerchain - NSE › Intake Create @Positive')
    expect(timedOut).toMatchObject({
      module: 'testSuiteNSE.spec.js',
      env: { project: 'tests' },
      status: 'failed',
      errorType: 'timeout',
      message: 'Test timeout of 30000ms exceeded.',
    })
    expect(timedOut.stack).toContain("waiting for locator('//button[text()=\\'Submitt\\']')")
    expect(timedOut.stack).not.toContain('\u001b')
    expect(r.meta).toMatchObject({ startedAt: '2026-03-26T11:37:17.616Z', durationMs: 38736 })
  },
  'playwright-junit/playwright-report.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 36, failed: 4, skipped: 20 })
    // The project is in hostname: an env facet, and no runner id.
    expect(r.cases.filter((c) => c.env?.project === 'setup')).toHaveLength(6)
    expect(r.cases.filter((c) => c.env?.project === 'chrome')).toHaveLength(54)
    expect(r.meta.runnerId).toBeUndefined()
    const name = 'Grid › Data Entry › should open select dropdown options when pressing Spacebar in grid cell'
    const failed = caseNamed(r, name)
    expect(failed).toMatchObject({ module: 'tests/grid.spec.ts', errorType: 'timeout' })
    // message= holds "file:line:col title" in this Playwright version; the body says what went wrong.
    expect(failed.message).toMatch(/^Test timeout of 10000ms exceeded\.\n\nError: locator\.dblclick: Target closed/)
  },
  'pytest/horovod-gloo-standalone.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 80, skipped: 17 })
    expect(caseNamed(r, 'test_get_available_devices')).toMatchObject({
      module: 'test.test_spark.SparkTests',
      file: 'test/test_spark.py',
      status: 'skipped',
      message: 'get_available_devices only supported in Spark 3.0 and above',
    })
    expect(r.meta).toMatchObject({
      runnerId: '5528853fbe73',
      startedAt: '2020-08-31T09:24:41.605Z',
      durationMs: 205094,
    })
  },
  'pytest/pytest-properties-skips.xml': (r) => {
    expect(statuses(r)).toEqual({ passed: 6, failed: 2, skipped: 2 })
    expect(caseNamed(r, 'test_with_record_xml_attribute').module).toBe('custom_classname')
    expect(caseNamed(r, 'test_expected_failure').status).toBe('skipped') // pytest.xfail
    expect(caseNamed(r, 'test_always_fail').message).toBe('assert False')
    expect(r.meta.env).toBeUndefined() // custom_prop is not a run property
    expect(r.meta.startedAt).toBe('2025-11-15T16:51:49.548Z')
  },
}

/** Files in the fixtures folder that are not reports, and what parsing them must say. */
const REJECTED: Record<string, RegExp> = {
  'SOURCES.md': new RegExp(`: unknown report format; use --format <${FORMATS.join('\\|')}>$`),
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort()
}

/** What must hold for every report, whatever its format. */
function checkInvariants(r: ParsedReport): void {
  const ids = new Set<string>()
  for (const c of r.cases) {
    const id = JSON.stringify([c.module, c.name, c.env ?? {}])
    expect(ids.has(id), `duplicate identity ${id}`).toBe(false)
    ids.add(id)
    expect(c.attempts.length).toBeGreaterThanOrEqual(1)
    expect(c.attempts.map((a) => a.retry)).toEqual(c.attempts.map((_, i) => i))
    if (c.flakyOnRetry) {
      expect(c.status).toBe('passed')
      expect(c.attempts.slice(0, -1).some((a) => a.status === 'failed' || a.status === 'error')).toBe(true)
    }
    expect(c.message ?? '').not.toContain('\u001b')
  }
  for (const t of [r.meta.startedAt, r.meta.finishedAt]) {
    if (t) expect(t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  }
}

describe('public report fixtures', () => {
  const files = listFiles(FIXTURES)

  it('has facts for every file in the folder', () => {
    expect(files.filter((f) => !(f in FACTS) && !(f in REJECTED))).toEqual([])
    expect(files.length).toBeGreaterThanOrEqual(28)
  })

  for (const file of files.filter((f) => f in FACTS)) {
    it(file, async () => {
      const report = await parseReport(sourceFromFile(join(FIXTURES, file)))
      await FACTS[file]!(report)
      checkInvariants(report)
      expect(summarize(report)).toMatchSnapshot()
    })
  }

  for (const [file, message] of Object.entries(REJECTED)) {
    it(`${file} is not a report`, async () => {
      const error: unknown = await parseReport(sourceFromFile(join(FIXTURES, file))).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ReportParseError)
      expect((error as ReportParseError).file).toBe(join(FIXTURES, file))
      expect((error as ReportParseError).message).toMatch(message)
    })
  }
})
