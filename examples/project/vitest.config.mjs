// The flakewatch reporter sees every retry attempt; JUnit would show a test that passed on retry as a plain pass.
export default {
  test: {
    include: ['src/**/*.test.ts'],
    retry: 2,
    reporters: ['default', ['flakewatch/vitest', { outputFile: 'reports/flakewatch.json' }]],
  },
}
