import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'

let validator: ValidateFunction | undefined

/** The official CTRF JSON Schema as the `ctrf` npm package (ctrf-io, MIT) ships it: never a copy of ours. */
export function ctrfSchemaPath(): string {
  // The package exports no package.json; its entry point sits beside the schema in dist/.
  const entry = createRequire(import.meta.url).resolve('ctrf')
  return join(dirname(entry), 'ctrf-schema-0.0.json')
}

/** Every schema violation of a CTRF document, as `path: message`; empty when it is valid. */
export function ctrfSchemaErrors(report: unknown): string[] {
  if (!validator) {
    const ajv = new Ajv({ allErrors: true, strict: false })
    addFormats.default(ajv)
    validator = ajv.compile(JSON.parse(readFileSync(ctrfSchemaPath(), 'utf8')) as object)
  }
  return validator(report) ? [] : (validator.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message}`)
}
