import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import multipart from '@fastify/multipart'
import { z } from 'zod'
import { analysisOptions } from '../../config/load.js'
import { FlakewatchError, InputError } from '../../errors.js'
import { mergeContexts, parseEnvPairs, type RunContext } from '../../pipeline/run-context.js'
import type { UploadResponse } from '../api-types.js'
import { writeHook } from '../auth.js'
import type { ServerContext } from '../context.js'
import { parseInput } from '../selection.js'
import { spoolUpload, tooLarge, type SpooledUpload } from '../spool.js'
import { FORMATS, type Format } from '../../ingest/formats.js'
import { HttpError } from '../http-error.js'
import type { UploadSlot } from '../upload-pool.js'

/** Raw-body uploads: the report is the body, the run metadata are query parameters. */
const RAW_TYPES = ['application/xml', 'text/xml', 'application/json', 'application/octet-stream']

const text = z.string().trim().min(1).max(2000).optional()

/** The run metadata an upload may carry, named like the CLI's flags in snake_case. */
const UploadMeta = z.object({
  run_id: z.string().trim().min(1).max(500).optional(),
  suite: z.string().trim().min(1).max(500).optional(),
  branch: text,
  revision: text,
  pipeline_id: text,
  pipeline_url: text,
  job_id: text,
  job_url: text,
  job_status: text,
  pipeline_status: text,
  runner: text,
  artifacts_url: text,
  run_status: z.enum(['complete', 'interrupted', 'unknown']).optional(),
  env: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v])),
  format: z.string().trim().min(1).optional(),
  replace: z
    .enum(['true', 'false', '1', '0', ''])
    .optional()
    .transform((v) => v === 'true' || v === '1' || v === ''),
  name: z.string().trim().min(1).max(255).optional(),
  /**
   * The uploading checkout's repository root (`flakewatch upload` sends it): absolute test paths under it become
   * relative, as `flakewatch ingest` makes them on that machine.
   */
  root: z
    .string()
    .trim()
    .min(1)
    .max(4096)
    .refine((p) => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p), 'must be an absolute path')
    .optional(),
})

type Meta = z.output<typeof UploadMeta>

function contextOf(meta: Meta): RunContext {
  let env
  try {
    env = parseEnvPairs(meta.env)
  } catch (error) {
    throw new InputError(`query.env: ${(error as Error).message.replace(/^--env /, '')}`)
  }
  return mergeContexts({
    runId: meta.run_id,
    suite: meta.suite,
    branch: meta.branch,
    revision: meta.revision,
    pipelineId: meta.pipeline_id,
    pipelineUrl: meta.pipeline_url,
    jobId: meta.job_id,
    jobUrl: meta.job_url,
    jobStatus: meta.job_status,
    pipelineStatus: meta.pipeline_status,
    runnerId: meta.runner,
    artifactsUrl: meta.artifacts_url,
    status: meta.run_status,
    env,
  })
}

function defaultName(contentType: string | undefined): string {
  if (contentType?.includes('json')) return 'upload.json'
  if (contentType?.includes('xml')) return 'upload.xml'
  return 'upload'
}

/**
 * What a multipart file stream's failure means to the client. Busboy stops a file at the size limit, and the body
 * around it may then end before the part does: the stream's "terminated early" error is the limit (413), never a
 * server fault. A body cut short for any other reason is the client's (400).
 */
function multipartError(error: unknown, truncated: boolean, limit: number): unknown {
  if (error instanceof HttpError || error instanceof FlakewatchError) return error
  if (truncated || (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(limit)
  const message = (error as Error).message ?? ''
  if (/terminated early|unexpected end of (multipart|form)|premature close/i.test(message)) {
    return new InputError(`the multipart body ended before its last part did: ${message}`)
  }
  return error
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The upload queue slot this request holds, taken before its body is read. */
    flakewatchUploadSlot: UploadSlot | null
  }
}

/**
 * `POST /reports`: stores one report (raw body) or several (multipart files), exactly as `flakewatch ingest` does,
 * duplicates included. Auth is checked before the body is read, and so is room in the upload queue: a full queue
 * answers 503 with Retry-After before a byte of the body is spooled. This thread only receives, hashes and spools
 * the bytes; a worker parses and stores them (see `UploadPool`).
 */
export async function reportRoutes(scope: FastifyInstance, ctx: ServerContext): Promise<void> {
  // Only this scope takes raw bodies. They are spooled as they arrive (to a temporary file past a few MB), never
  // buffered whole, so an upload's memory does not follow its size.
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser(RAW_TYPES, async (request: FastifyRequest, payload: IncomingMessage) => {
    const declared = Number(request.headers['content-length'])
    if (declared > ctx.bodyLimit) throw tooLarge(ctx.bodyLimit)
    // Not destroyed when the spool stops at the limit: that would drop the connection under the 413 being sent
    // (see drainUnreadBody, which reads the rest).
    const body = payload.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>
    return spoolUpload(body, ctx.bodyLimit, Number.isFinite(declared) ? declared : undefined)
  })
  await scope.register(multipart, {
    limits: { fileSize: ctx.bodyLimit, files: 50, fields: 100, fieldSize: 8192, parts: 200 },
  })

  scope.decorateRequest('flakewatchUploadSlot', null)
  const giveBack = (request: FastifyRequest) => {
    if (request.flakewatchUploadSlot) ctx.uploads.release(request.flakewatchUploadSlot)
  }
  // A request that ends before its upload was queued (refused body, bad query, client gone) gives its slot back;
  // a queued upload keeps it until stored, whatever happens to its request.
  scope.addHook('onResponse', (request, _reply, done) => {
    giveBack(request)
    done()
  })
  scope.addHook('onRequestAbort', (request, done) => {
    giveBack(request)
    done()
  })

  const reserve = async (request: FastifyRequest, reply: FastifyReply) => {
    const slot = ctx.uploads.reserve()
    if (!slot) {
      const seconds = ctx.uploads.retryAfterSeconds()
      void reply.header('retry-after', String(seconds))
      const { capacity } = ctx.uploads.stats()
      const message = `the server is storing ${capacity} uploads already; retry in ${seconds} s`
      throw new HttpError(503, { code: 'FW_BUSY', message })
    }
    request.flakewatchUploadSlot = slot
  }

  const route = { bodyLimit: ctx.bodyLimit, onRequest: writeHook(ctx.tokens), preParsing: reserve }
  scope.post('/reports', route, async (request, reply) => {
    const files: { name: string; upload: SpooledUpload }[] = []
    let answer: { status: number; body: unknown }
    try {
      answer = await receive(request, files)
    } finally {
      // Before the answer goes out: a client that sees it finds no temporary file left behind.
      for (const f of files) await f.upload.dispose()
    }
    return reply.status(answer.status).send(answer.body)
  })

  async function receive(
    request: FastifyRequest,
    files: { name: string; upload: SpooledUpload }[],
  ): Promise<{ status: number; body: unknown }> {
    const fields: Record<string, string | string[]> = {}
    if (request.isMultipart()) {
      let total = 0
      let truncated = false
      try {
        for await (const part of request.parts()) {
          if (part.type === 'file') {
            const upload = await spoolUpload(part.file, ctx.bodyLimit - total).finally(
              () => (truncated ||= part.file.truncated),
            )
            files.push({ name: part.filename || part.fieldname, upload })
            total += upload.bytes
            if (part.file.truncated) throw tooLarge(ctx.bodyLimit)
          } else {
            const value = String(part.value)
            const previous = fields[part.fieldname]
            fields[part.fieldname] = previous === undefined ? value : [previous, value].flat()
          }
        }
      } catch (error) {
        throw multipartError(error, truncated, ctx.bodyLimit)
      }
    } else if (request.body) {
      files.push({ name: '', upload: request.body as SpooledUpload })
    }
    const meta = parseInput(UploadMeta, { ...(request.query as object), ...fields }, 'query')
    if (!request.isMultipart() && files[0]) files[0].name = meta.name ?? defaultName(request.headers['content-type'])
    if (files.every((f) => f.upload.bytes === 0)) {
      throw new InputError('no report in the request: send it as the body or as multipart files')
    }

    const format = meta.format
    if (format !== undefined && !(FORMATS as readonly string[]).includes(format)) {
      throw new InputError(`query.format: expected one of ${FORMATS.join(', ')}, got "${format}"`)
    }
    const job = {
      files: files
        .filter((f) => f.upload.bytes > 0)
        .map((f) => ({ name: f.name, hash: f.upload.hash, path: f.upload.path, content: f.upload.content })),
      context: contextOf(meta),
      format: format as Format | undefined,
      replace: meta.replace,
      root: meta.root ?? null,
      analysis: analysisOptions(ctx.config),
    }
    const summary: UploadResponse = await ctx.uploads.run(request.flakewatchUploadSlot!, job)
    // Before the answer: the uploader's next read sees its report. Only the tests it touched are re-analysed.
    if (summary.ingested.length) {
      ctx.reads.invalidate()
      await ctx.cache.applyWrite(summary.ingested.map((i) => i.run_id))
    }
    if (ctx.replica && summary.ingested.length) {
      // After the commit: a read presenting this position sees the upload, on whichever server answers it.
      summary.written_lsn = request.flakewatchWritten = await ctx.replica.writtenPosition()
    }
    request.log.info(
      { ingested: summary.ingested.length, duplicates: summary.duplicates.length, failed: summary.failed.length },
      'upload',
    )
    if (summary.failed.length === 0) return { status: summary.ingested.length ? 201 : 200, body: summary }
    const message = `${summary.failed.length} of ${files.length} report(s) failed: ${summary.failed[0]!.error}`
    return { status: 422, body: { error: { code: 'FW_REPORT_PARSE', message }, ...summary } }
  }
}
