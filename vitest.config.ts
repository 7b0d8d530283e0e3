import { defineConfig } from 'vitest/config'
import { LongestFirst } from './test/sequencer.js'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Scratch projects that the end-to-end tests write and run with real runners.
    exclude: ['test/.tmp/**', '**/node_modules/**'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Real browsers, real runners and a real database share 2 cores: keep parallelism modest.
    maxWorkers: 2,
    pool: 'forks',
    sequence: { sequencer: LongestFirst },
  },
})
