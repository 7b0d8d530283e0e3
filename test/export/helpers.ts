import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Writable } from 'node:stream'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { Store } from '../../src/store/store.js'
import { writeBundle, type BundleExportOptions } from '../../src/export/write-bundle.js'
import type { Bundle } from '../../src/export/bundle-types.js'
import { formatAjvError } from '../../src/export/bundle-schema.js'

export const ROOT = resolve(import.meta.dirname, '../..')
export const SCHEMA_NAME = 'flake-history-bundle.v1.schema.json'
export const REPO_SCHEMA = join(ROOT, 'schema', SCHEMA_NAME)
/**
 * SHA-256 of GitLabViz's own files (BeamNG/GitLabViz @ dbcdf1f, see test/fixtures/bundle/GITLABVIZ-SOURCE.md):
 * the repository's copies must stay byte-identical to the contract as published.
 */
export const GITLABVIZ_SHA256 = {
  schema: '95ee34220b3cf071c0fe0369a933c21aae4316794f47be85649d192b68317443',
  sample: 'e8ae592d1f94e9b822f46d08539cb48ce5a1555c704c42f5ea1342eb21c22953',
} as const
export const FIXTURES = join(ROOT, 'test/fixtures/bundle')
export const SAMPLE = join(FIXTURES, 'valid/gitlabviz-sample.json')

/** The schema tests validate against: the vendored copy, checked byte for byte against GitLabViz's. */
export function schemaText(): string {
  return readFileSync(REPO_SCHEMA, 'utf8')
}

let validator: ValidateFunction | undefined

/** An ajv 2020-12 validator with formats, built here (not with the code under test) from {@link schemaText}. */
export function validate(data: unknown): string[] {
  if (!validator) {
    const ajv = new Ajv2020({ allErrors: true, strict: false })
    addFormats.default(ajv)
    validator = ajv.compile(JSON.parse(schemaText()) as object)
  }
  return validator(data) ? [] : (validator.errors ?? []).map(formatAjvError)
}

export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A Writable that keeps what it is given, and counts the writes (to see that the writer streams). */
export function collector(): Writable & { text: () => string; writes: number } {
  const parts: Buffer[] = []
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      parts.push(chunk)
      out.writes++
      cb()
    },
  })
  const out = Object.assign(w, { text: () => Buffer.concat(parts).toString('utf8'), writes: 0 })
  return out
}

export async function exportBundle(
  store: Store,
  opts: BundleExportOptions = {},
): Promise<{ bundle: Bundle; text: string }> {
  const out = collector()
  await writeBundle(store, out, opts)
  const text = out.text()
  return { bundle: JSON.parse(text) as Bundle, text }
}
