/**
 * `flakewatch/playwright/reporter`: records every Playwright test with every attempt in the flakewatch store (or a
 * CTRF file), and can enforce quarantine from inside Playwright. Loads no `@playwright/test` code at runtime.
 */
import { relative, sep } from 'node:path'
import type {
  FullConfig,
  FullResult,
  Reporter,
  Suite,
  TestCase,
  TestError,
  TestResult,
} from '@playwright/test/reporter'
import { describeCases, prepareRecording } from '../reporters/build-cases.js'
import type { QuarantineReporterOptions, ResolvedReporterOptions } from '../reporters/options.js'
import { reporterOptions } from '../reporters/options.js'
import { playwrightReport, PLAYWRIGHT_SOURCE, type PlaywrightTestRecord } from '../reporters/playwright-cases.js'
import { decideQuarantine, formatForgiven, loadQuarantines } from '../reporters/quarantine.js'
import { errorMessage, processIo, say, writeRecording, type ReporterIo } from '../reporters/writer.js'

export type { QuarantineReporterOptions as PlaywrightReporterOptions } from '../reporters/options.js'

/** What Playwright passes next to the user's options. */
interface PassedOptions extends QuarantineReporterOptions {
  configDir?: string
  _mode?: string
}

/**
 * A Playwright test as plain data: project, file relative to the config's `rootDir`, the describe chain, and the
 * attempts the reporter saw.
 */
export function playwrightRecord(test: TestCase, results: TestResult[], rootDir: string): PlaywrightTestRecord {
  const describes: string[] = []
  for (let s: Suite | undefined = test.parent; s && s.type === 'describe'; s = s.parent) describes.unshift(s.title)
  return {
    project: test.parent.project()?.name ?? '',
    file: relative(rootDir, test.location.file).split(sep).join('/'),
    describes,
    title: test.title,
    expectedStatus: test.expectedStatus,
    outcome: test.outcome(),
    tags: [...test.tags],
    annotations: test.annotations.map((a) => ({ type: a.type, description: a.description })),
    attempts: results.map((r) => ({
      retry: r.retry,
      status: r.status,
      duration: r.duration,
      startTime: r.startTime,
      error: r.error ? plainError(r.error) : undefined,
      errors: r.errors.map(plainError),
      annotations: r.annotations.map((a) => ({ type: a.type, description: a.description })),
    })),
  }
}

const plainError = (e: TestError) => ({ message: e.message, stack: e.stack })

/**
 * Records each test with every attempt (retry, status, duration, error), its project as the `project` facet, its
 * tags and annotations (a `flakewatch-healed` annotation sets `healingOccurred`), and the run's CI metadata, once,
 * when the run ends. With `quarantine: true`, a run whose only unexpected failures are quarantined passes.
 * @example
 * // playwright.config.ts
 * export default defineConfig({ reporter: [['list'], ['flakewatch/playwright/reporter', { quarantine: true }]] })
 */
export default class FlakewatchPlaywrightReporter implements Reporter {
  private readonly options: ResolvedReporterOptions | null
  private readonly listOnly: boolean
  private config: FullConfig | null = null
  private readonly attempts = new Map<TestCase, TestResult[]>()
  private globalErrors = 0
  private readonly io: ReporterIo = processIo()

  constructor(options: QuarantineReporterOptions = {}) {
    const passed = options as PassedOptions
    this.listOnly = passed._mode === 'list'
    const { configDir: _configDir, _mode, ...own } = passed
    this.options = reporterOptions(own, passed.configDir ?? process.cwd(), this.io)
  }

  printsToStdio(): boolean {
    return false
  }

  onBegin(config: FullConfig): void {
    this.config = config
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    const seen = this.attempts.get(test)
    if (seen) seen.push(result)
    else this.attempts.set(test, [result])
  }

  onError(): void {
    this.globalErrors++
  }

  async onEnd(result: FullResult): Promise<{ status?: FullResult['status'] } | undefined> {
    if (!this.options || this.listOnly) return undefined
    try {
      return await this.finish(result, this.options)
    } catch (error) {
      // Whatever went wrong in here, the run keeps the outcome Playwright gave it.
      say(this.io, `reporter failed: ${errorMessage(error)}. The test run's outcome is unchanged.`)
      return undefined
    } finally {
      // UI and watch modes run again with the same reporter: each run is recorded on its own.
      this.attempts.clear()
      this.globalErrors = 0
    }
  }

  private async finish(
    result: FullResult,
    options: ResolvedReporterOptions,
  ): Promise<{ status: 'passed' } | undefined> {
    const rootDir = this.config?.rootDir ?? process.cwd()
    const records = [...this.attempts].map(([test, results]) => playwrightRecord(test, results, rootDir))
    if (records.length === 0) {
      say(this.io, 'no test ran; nothing recorded')
      return undefined
    }
    const incomplete = this.incompleteReason(records)
    const interrupted = result.status === 'interrupted' || result.status === 'timedout' || incomplete !== null
    const report = await playwrightReport(records, {
      startTime: result.startTime,
      durationMs: Math.round(result.duration),
      status: interrupted ? 'interrupted' : 'complete',
      metadata: this.config?.metadata,
    })
    const recording = prepareRecording(report, { suite: options.suite, env: this.io.env, source: PLAYWRIGHT_SOURCE })
    await writeRecording(recording, options.target, this.io, { name: 'playwright', version: this.config?.version })
    if (!options.quarantine || result.status === 'passed') return undefined

    const loaded = await loadQuarantines(options.quarantine, options.db, this.io.env, recording.batch.runs)
    if ('error' in loaded) {
      say(this.io, `could not read quarantines, so none apply: ${loaded.error}`)
      return undefined
    }
    const { results, runOf } = loaded
    const decision = decideQuarantine({
      status: result.status,
      incomplete,
      results,
      runOf,
      quarantines: loaded.records,
      rules: loaded.rules,
      failOnFlaky: this.config?.failOnFlakyTests ?? false,
      now: Date.now(),
    })
    if (decision.note) say(this.io, decision.note)
    if (!decision.pass) return undefined
    const header = `every failure among ${describeCases(report.cases)} is quarantined, so the run passes. Forgiven:`
    say(this.io, [header, ...formatForgiven(decision.forgiven)].join('\n'))
    return { status: 'passed' }
  }

  /** Why the run did not run its suite to the end although Playwright calls it failed rather than interrupted. */
  private incompleteReason(records: PlaywrightTestRecord[]): string | null {
    if (this.globalErrors > 0) return `Playwright reported ${this.globalErrors} error(s) outside the tests`
    const maxFailures = this.config?.maxFailures ?? 0
    const unexpected = records.filter((r) => r.outcome === 'unexpected').length
    if (maxFailures > 0 && unexpected >= maxFailures) {
      return `the run stopped at maxFailures (${maxFailures}), so some tests may not have run`
    }
    return null
  }
}
