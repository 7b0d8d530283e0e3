/**
 * The report format names, kept apart from the parsers so that the CLI can list them for `--format` without
 * loading any parser: start-up time is the CI gate's budget.
 */
export const FORMATS = [
  'junit',
  'trx',
  'ctrf',
  'playwright-json',
  'jest-json',
  'simple-json',
  'go-json',
  'tap',
  'nunit',
  'xunit',
  'bazel-bep',
  'mocha-json',
  'mochawesome',
  'rspec-json',
  'cucumber-json',
  'cucumber-messages',
  'pytest-json',
] as const

/** A report format name, one of {@link FORMATS}. */
export type Format = (typeof FORMATS)[number]
