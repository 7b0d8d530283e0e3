import { describe, expect, it } from 'vitest'
import { detectFormat } from '../../src/ingest/detect.js'

describe('detectFormat', () => {
  it.each([
    ['junit, lone testsuite', '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="a">', 'junit'],
    ['junit, no declaration', '<testsuites id="" name="">', 'junit'],
    ['junit, BOM and leading whitespace', '\uFEFF\n\n   <?xml version="1.0"?><testsuites>', 'junit'],
    ['junit, comments and PIs first', '<?xml version="1.0"?>\n<!-- made by x -->\n<?pi x?>\n<testsuites>', 'junit'],
    ['junit, DOCTYPE names the root', '<?xml version="1.0"?>\n<!DOCTYPE testsuites [<!ENTITY a "b">]>', 'junit'],
    ['trx', '\uFEFF<?xml version="1.0" encoding="utf-8"?>\n<TestRun id="1" xmlns="http://microsoft.com/x">', 'trx'],
    ['trx, prefixed', '<t:TestRun xmlns:t="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">', 'trx'],
    ['ctrf', '{\n\t"results": {\n\t\t"tool": {\n\t\t\t"name": "jest"', 'ctrf'],
    ['ctrf, reportFormat first', '{"reportFormat":"CTRF","specVersion":"0.0.0","results":', 'ctrf'],
    ['jest --json', '{"numFailedTestSuites":0,"numFailedTests":0,"numPassedTestSuites":1', 'jest-json'],
    ['jest aggregated result', '{"testResults": [{"testFilePath": "/a.test.js"', 'jest-json'],
    ['playwright json', '{\n  "config": {\n    "configFile": "/c.ts",\n    "rootDir": "/p"', 'playwright-json'],
    ['playwright json, no config', '{"suites": [{"title": "a.spec.ts", "specs": [', 'playwright-json'],
    ['simple CI json', '{"metadata": {"ref": "main", "pipeline_id": 1}, "tests": {"A/b/c": true}}', 'simple-json'],
    ['simple CI json, tests first', '{"tests": {"Suite/Case/test": false, "x/y": true}', 'simple-json'],
  ] as const)('%s', (_, head, format) => {
    expect(detectFormat(head, 'report.txt')).toBe(format)
  })

  it.each([
    ['empty', ''],
    ['markdown', '# Report\n\n| a | b |'],
    ['another XML document', '<?xml version="1.0"?><html><body/></html>'],
    ['JSON without a known signature', '{"hello": "world"}'],
    ['a JSON array', '[{"name": "a"}]'],
  ])('%s is unknown', (_, head) => {
    expect(detectFormat(head, 'results.xml')).toBeNull()
  })

  it('does not trust the extension', () => {
    expect(detectFormat('{"numTotalTests": 3', 'junit.xml')).toBe('jest-json')
    expect(detectFormat('<testsuite name="x">', 'report.json')).toBe('junit')
  })

  it('uses the .trx extension only when the root lies beyond the head', () => {
    const head = `<?xml version="1.0"?>\n<!-- ${'x'.repeat(100)}`
    expect(detectFormat(head, 'run.trx')).toBe('trx')
    expect(detectFormat(head, 'run.xml')).toBeNull()
  })
})
