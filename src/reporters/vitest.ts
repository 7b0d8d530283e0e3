/**
 * `flakewatch/vitest`: records every Vitest test with every attempt (`retry`) in the flakewatch store, or in a
 * CTRF file. Its default export is the reporter class, which Vitest instantiates with the options.
 */
import { MAX_CASES_PER_REPORT } from '../limits.js'
import { describeCases, prepareRecording } from './build-cases.js'
import { reporterOptions, type QuarantineReporterOptions, type ResolvedReporterOptions } from './options.js'
import { enforceQuarantine } from './quarantine.js'
import { vitestReport, type VitestTestModule } from './vitest-cases.js'
import { errorMessage, processIo, say, writeRecording, type ReporterIo } from './writer.js'

export type { QuarantineReporterOptions as VitestReporterOptions } from './options.js'

/** The source name of the batches this reporter writes. */
const VITEST_SOURCE = 'flakewatch/vitest'

/**
 * Writes once per test run (`onTestRunEnd`); it never fails the run and never changes its outcome.
 * @example
 * // vitest.config.ts
 * export default defineConfig({ test: { retry: 2, reporters: ['default', ['flakewatch/vitest', { suite: 'unit' }]] } })
 */
export default class FlakewatchVitestReporter {
  private options: ResolvedReporterOptions | null = null
  private readonly io: ReporterIo = processIo()
  private startTime = new Date()
  /** Test id → the order tests started in: Vitest's own lists follow the source, not a shuffled run. */
  private readonly startOrder = new Map<string, number>()
  private version: string | undefined

  constructor(private readonly raw: QuarantineReporterOptions = {}) {}

  onInit(vitest: { config: { root: string }; version?: string }): void {
    this.version = vitest.version
    this.options = reporterOptions(this.raw, vitest.config.root, this.io)
  }

  onTestRunStart(): void {
    this.startTime = new Date()
    this.startOrder.clear()
  }

  onTestCaseReady(test: { id: string }): void {
    // Bounded like a report's cases; past the bound, start times order the tests instead.
    if (this.startOrder.size < MAX_CASES_PER_REPORT && !this.startOrder.has(test.id)) {
      this.startOrder.set(test.id, this.startOrder.size)
    }
  }

  async onTestRunEnd(
    testModules: ReadonlyArray<VitestTestModule>,
    unhandledErrors: ReadonlyArray<unknown>,
    reason: 'passed' | 'interrupted' | 'failed',
  ): Promise<void> {
    if (!this.options) return
    try {
      const report = vitestReport(
        testModules,
        {
          startTime: this.startTime,
          endTime: new Date(),
          status: reason === 'interrupted' ? 'interrupted' : 'complete',
        },
        this.startOrder,
      )
      if (report.cases.length === 0) return say(this.io, 'no test ran; nothing recorded')
      const recording = prepareRecording(report, { suite: this.options.suite, env: this.io.env, source: VITEST_SOURCE })
      await writeRecording(recording, this.options.target, this.io, { name: 'vitest', version: this.version })
      const unloaded = testModules.filter((m) => m.errors().length).length
      const decision = await enforceQuarantine(
        {
          status: reason === 'interrupted' ? 'interrupted' : reason,
          incomplete:
            unhandledErrors.length > 0
              ? `Vitest reported ${unhandledErrors.length} unhandled error(s)`
              : unloaded > 0
                ? `${unloaded} test file(s) failed to load`
                : null,
          runs: recording.batch.runs,
          failOnFlaky: false,
          now: Date.now(),
        },
        this.options,
        this.io,
        describeCases(report.cases),
      )
      // Vitest has set exitCode 1 for the failures before this hook; a later failure (coverage) sets it again.
      if (decision.pass) process.exitCode = 0
    } catch (error) {
      say(this.io, `reporter failed: ${errorMessage(error)}. The test run's outcome is unchanged.`)
    }
  }
}
