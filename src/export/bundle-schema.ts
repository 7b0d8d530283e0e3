import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

/**
 * Where the v1 schema ships: `schema/` at the package root, one level above both `src/` and `dist/`, so the
 * same relative URL works from the sources and from the build.
 */
export const BUNDLE_SCHEMA_FILE = fileURLToPath(
  new URL('../../schema/flake-history-bundle.v1.schema.json', import.meta.url),
)

let compiled: ValidateFunction | undefined

/**
 * A draft 2020-12 validator with formats (`date-time`, `uri`) for the v1 schema, compiled once per process.
 * @example createBundleValidator(readFileSync(file, 'utf8'))(bundle)
 */
export function createBundleValidator(schemaText: string = readFileSync(BUNDLE_SCHEMA_FILE, 'utf8')): ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: false })
  // ajv-formats is CommonJS; under NodeNext its default import is the module object, whose `default` is the plugin.
  addFormats.default(ajv)
  return ajv.compile(JSON.parse(schemaText) as object)
}

/**
 * Validates a parsed bundle against the shipped v1 schema and returns readable problems (empty when valid),
 * at most `max` of them.
 * @example bundleSchemaErrors({ schema_version: 1 }) // ['(root): must have required property \'generated_at\'', …]
 */
export function bundleSchemaErrors(data: unknown, max = 5): string[] {
  compiled ??= createBundleValidator()
  if (compiled(data)) return []
  return (compiled.errors ?? []).slice(0, max).map(formatAjvError)
}

export function formatAjvError(e: ErrorObject): string {
  const values = e.keyword === 'enum' ? (e.params as { allowedValues: unknown[] }).allowedValues : null
  const allowed = values ? ` (${values.map((v) => JSON.stringify(v)).join(', ')})` : ''
  return `${e.instancePath || '(root)'}: ${e.message ?? e.keyword}${allowed}`
}
