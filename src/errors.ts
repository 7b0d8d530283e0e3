/** Every error flakewatch raises on purpose. `code` is stable; messages are for humans. */
export abstract class FlakewatchError extends Error {
  abstract readonly code: string
  constructor(message: string, opts?: ErrorOptions) {
    super(message, opts)
    this.name = new.target.name
  }
}

/** A report could not be read. Names the file and, where known, the line. */
export class ReportParseError extends FlakewatchError {
  readonly code = 'FW_REPORT_PARSE'
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly detail: string,
    opts?: ErrorOptions,
  ) {
    super(`${file}${line ? `:${line}` : ''}: ${detail}`, opts)
  }
}

/**
 * A report asks for more than flakewatch accepts (see `src/limits.ts`): too many attempts, cases, runs, files.
 * The report is refused whole. Mapped to exit 2 on the CLI and 422 over HTTP.
 */
export class ReportLimitError extends FlakewatchError {
  readonly code = 'FW_REPORT_LIMIT'
  constructor(
    readonly file: string,
    /** What exceeded the limit, as the report names it (`tests[3].retries`). */
    readonly field: string,
    readonly limit: number,
    readonly actual: number | undefined,
    hint = '',
  ) {
    const n = (x: number) => x.toLocaleString('en-US')
    const is = actual === undefined ? 'is' : `is ${n(actual)},`
    super(`${file}: ${field} ${is} over the limit of ${n(limit)}; report refused${hint}`)
  }
}

/** Configuration or command-line input is invalid. */
export class ConfigError extends FlakewatchError {
  readonly code = 'FW_CONFIG'
  constructor(readonly issues: string[]) {
    super(issues.join('\n'))
  }
}

/** Bad input that is not a report: a usage error, an unknown test, a bundle of the wrong version. */
export class InputError extends FlakewatchError {
  readonly code = 'FW_INPUT'
}

/** A request for something that does not exist. */
export class NotFoundError extends FlakewatchError {
  readonly code = 'FW_NOT_FOUND'
}

/** The store could not be opened, migrated or written. */
export class StoreError extends FlakewatchError {
  readonly code = 'FW_STORE'
}

/** Missing or wrong credentials. */
export class AuthError extends FlakewatchError {
  readonly code = 'FW_AUTH'
}

/** A deliberate exit with a given code (1 = the gate failed). Only the CLI turns it into a process exit. */
export class ExitError extends FlakewatchError {
  readonly code = 'FW_EXIT'
  constructor(
    readonly exitCode: number,
    message = `exit ${exitCode}`,
  ) {
    super(message)
  }
}

/** A bug in flakewatch itself. */
export class InternalError extends FlakewatchError {
  readonly code = 'FW_INTERNAL'
}
