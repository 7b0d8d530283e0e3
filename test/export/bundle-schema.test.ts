import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundleSchemaErrors, BUNDLE_SCHEMA_FILE } from '../../src/export/bundle-schema.js'
import { FIXTURES, GITLABVIZ_SHA256, REPO_SCHEMA, SAMPLE, validate } from './helpers.js'

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

const vectors = (kind: 'valid' | 'invalid') =>
  readdirSync(join(FIXTURES, kind))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(join(FIXTURES, kind, f), 'utf8')) as unknown] as const)

describe('the v1 schema', () => {
  it("ships verbatim: schema/ is byte-identical to GitLabViz's published schema", () => {
    expect(sha256(readFileSync(REPO_SCHEMA))).toBe(GITLABVIZ_SHA256.schema)
  })

  it("the sample fixture is byte-identical to GitLabViz's sample", () => {
    expect(sha256(readFileSync(SAMPLE))).toBe(GITLABVIZ_SHA256.sample)
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
