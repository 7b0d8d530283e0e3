import { FlakewatchError } from '../errors.js'

/**
 * An HTTP failure a handler raises on purpose, carrying its status.
 * @example throw new HttpError(404, { message: 'no such test' })
 */
export class HttpError extends FlakewatchError {
  readonly code: string
  constructor(
    readonly statusCode: number,
    opts: { message: string; code?: string },
  ) {
    super(opts.message)
    this.code = opts.code ?? `FW_HTTP_${statusCode}`
  }
}
