import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundleSchemaErrors, BUNDLE_SCHEMA_FILE } from '../../src/export/bundle-schema.js'
import { FIXTURES, REPO_SCHEMA, SAMPLE, SHARED_DIR, SHARED_SCHEMA, validate } from './helpers.js'

const vectors = (kind: 'valid' | 'invalid') =>
  readdirSync(join(FIXTURES, kind))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(join(FIXTURES, kind, f), 'utf8')) as unknown] as const)

describe('the v1 schema', () => {
  it.skipIf(!existsSync(SHARED_SCHEMA))('ships verbatim: schema/ is byte-identical to the shared contract', () => {
    expect(readFileSync(REPO_SCHEMA, 'utf8')).toBe(readFileSync(SHARED_SCHEMA, 'utf8'))
  })

  it.skipIf(!existsSync(SHARED_DIR))('the sample fixture is byte-identical to the shared sample', () => {
    expect(readFileSync(SAMPLE, 'utf8')).toBe(
      readFileSync(join(SHARED_DIR, 'flake-history-bundle-sample.json'), 'utf8'),
    )
  })

  it('the runtime validator loads the shipped copy', () => {
    expect(BUNDLE_SCHEMA_FILE).toBe(REPO_SCHEMA)
  })

  it('has both kinds of vector', () => {
    expect(vectors('valid').length).toBeGreaterThanOrEqual(5)
    expect(vectors('invalid').length).toBeGreaterThanOrEqual(20)
  })

  describe.each(vectors('valid'))('valid/%s', (_name, data) => {
    it('is accepted by ajv (test-side validator and the runtime one)', () => {
      expect(validate(data)).toEqual([])
      expect(bundleSchemaErrors(data)).toEqual([])
    })
  })

  describe.each(vectors('invalid'))('invalid/%s', (_name, data) => {
    it('is rejected by ajv (test-side validator and the runtime one)', () => {
      expect(validate(data).length).toBeGreaterThan(0)
      expect(bundleSchemaErrors(data).length).toBeGreaterThan(0)
    })
  })

  it('each invalid vector fails at one place only (so it tests the rule it names, not an accident)', () => {
    for (const [name, data] of vectors('invalid')) {
      const paths = new Set(validate(data).map((e) => e.slice(0, e.indexOf(': '))))
      expect([...paths], name).toHaveLength(1)
    }
  })
})
