import { join } from 'node:path'

/**
 * Real reports from public repositories, vendored with their sources and licences (test/fixtures/public/SOURCES.md),
 * so that the suite reads nothing outside the repository.
 */
export const PUBLIC_FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'public')

/**
 * One real report (repository-relative) per format issue 29 added, each with failures or retries: what the
 * end-to-end tests of those formats (gate, run, duplicates) read.
 */
export const ISSUE_29_REPORTS: Record<string, string> = {
  'go-json': 'test/fixtures/reports/go-json/go-test.json',
  tap: 'test/fixtures/reports/tap/node-test.tap',
  nunit: 'test/fixtures/public/nunit/dotnet-nunit3-console.xml',
  xunit: 'test/fixtures/public/xunit/xunit-2.0-console.xml',
  'bazel-bep': 'test/fixtures/public/bazel-bep/runs-per-test-flaky.json',
  'mocha-json': 'test/fixtures/public/mocha-json/dorny-mocha.json',
  mochawesome: 'test/fixtures/reports/mochawesome/mochawesome.json',
  'rspec-json': 'test/fixtures/public/rspec-json/dorny-rspec.json',
  'cucumber-json': 'test/fixtures/reports/cucumber/cucumber.json',
  'cucumber-messages': 'test/fixtures/reports/cucumber/cucumber.ndjson',
  'pytest-json': 'test/fixtures/reports/pytest-json/pytest-rerun.json',
}
