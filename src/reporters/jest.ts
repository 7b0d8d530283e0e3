/**
 * `flakewatch/jest`: records every Jest test with every attempt (`jest.retryTimes`) in the flakewatch store, or in
 * a CTRF file. Jest loads it by path; its default export is the reporter class.
 */
import { describeCases, prepareRecording } from './build-cases.js'
import { jestReport, JEST_SOURCE, type JestAggregatedResult } from './jest-cases.js'
import { reporterOptions, type QuarantineReporterOptions, type ResolvedReporterOptions } from './options.js'
import { enforceQuarantine } from './quarantine.js'
import { errorMessage, processIo, say, writeRecording, type ReporterIo } from './writer.js'

export type { QuarantineReporterOptions as JestReporterOptions } from './options.js'

/**
 * Writes once, when the run completes; it never fails the run and never changes its outcome.
 * @example
 * // jest.config.js
 * export default { reporters: ['default', ['flakewatch/jest', { suite: 'unit' }]] }
 */
export default class FlakewatchJestReporter {
  private readonly options: ResolvedReporterOptions | null
  private readonly io: ReporterIo = processIo()

  constructor(globalConfig: { rootDir?: string } = {}, options: QuarantineReporterOptions = {}) {
    this.options = reporterOptions(options, globalConfig.rootDir ?? process.cwd(), this.io)
  }

  async onRunComplete(_contexts: unknown, results: JestAggregatedResult): Promise<void> {
    if (!this.options) return
    try {
      const report = await jestReport(results)
      if (report.cases.length === 0) return say(this.io, 'no test ran; nothing recorded')
      const recording = prepareRecording(report, { suite: this.options.suite, env: this.io.env, source: JEST_SOURCE })
      await writeRecording(recording, this.options.target, this.io, { name: 'jest' })
      const broken = results.testResults.filter((f) => f.testExecError).length
      const decision = await enforceQuarantine(
        {
          status: results.wasInterrupted ? 'interrupted' : (results.numFailedTests ?? 0) > 0 ? 'failed' : 'passed',
          incomplete:
            broken > 0 || (results.numRuntimeErrorTestSuites ?? 0) > 0 ? `${broken} test file(s) failed to run` : null,
          runs: recording.batch.runs,
          failOnFlaky: false,
          now: Date.now(),
        },
        this.options,
        this.io,
        describeCases(report.cases),
      )
      // Jest computes `success`, hence the exit code, from this very object once the reporters ran: the forgiven
      // failures stop counting there (the report above still lists them).
      if (decision.pass) results.numFailedTests = 0
    } catch (error) {
      say(this.io, `reporter failed: ${errorMessage(error)}. The test run's outcome is unchanged.`)
    }
  }
}
