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
    [
      'go test -json',
      '{"Time":"2026-11-27T08:23:04.006822605Z","Action":"run","Package":"a/b","Test":"TestA"}',
      'go-json',
    ],
    [
      'go test -json, go 1.20+ start event',
      '{"Time":"2026-11-27T08:23:04Z","Action":"start","Package":"a/b"}',
      'go-json',
    ],
    ['test2json without times', '{"Action":"output","Package":"a","Output":"ok"}', 'go-json'],
    ['bazel event stream', '{"id":{"started":{}},"children":[{"progress":{}}],"started":{"uuid":"u"}}', 'bazel-bep'],
    ['TAP 13', 'TAP version 13\n# Subtest: a\nok 1 - a', 'tap'],
    ['TAP 14', 'TAP version 14\n1..2', 'tap'],
    ['TAP without a version line', '1..3\nok 1 - a', 'tap'],
    ['TAP, first point', 'not ok 1 - broken', 'tap'],
    [
      'nunit 3',
      '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n<test-run id="0" runstate="Runnable">',
      'nunit',
    ],
    ['nunit 3 adapter, per assembly', '\uFEFF<test-suite type="Assembly" id="1070" name="A.dll">', 'nunit'],
    ['nunit 2', '<?xml version="1.0"?>\n<!--comment-->\n<test-results name="a.dll" total="21">', 'nunit'],
    ['xunit v2', '<?xml version="1.0" encoding="utf-8"?>\n<assemblies timestamp="07/09/2026 10:00:00">', 'xunit'],
    [
      'mocha json',
      '{\n  "stats": {\n    "suites": 2,\n    "passes": 3\n  },\n  "tests": [\n    {\n      "title": "adds",\n      "fullTitle": "cart adds"',
      'mocha-json',
    ],
    [
      'mochawesome',
      '{\n  "stats": {\n    "suites": 2,\n    "passPercent": 75,\n    "pendingPercent": 25',
      'mochawesome',
    ],
    ['rspec json', '{"version":"3.12.0","examples":[{"id":"./spec/a_spec.rb[1:1]"', 'rspec-json'],
    ['rspec json with seed', '{"version":"3.13.0","seed":1234,"examples":[', 'rspec-json'],
    ['xunit v2, one assembly', '<assembly name="a.dll" test-framework="xUnit.net 2.4.2">', 'xunit'],
    [
      'cucumber-js json',
      '[\n  {\n    "description": "",\n    "elements": [\n      {\n        "description": "",\n        "id": "cart;adds",\n        "keyword": "Scenario"',
      'cucumber-json',
    ],
    [
      'cucumber-jvm json',
      '[{"line":1,"elements":[{"start_timestamp":"2022-03-22T15:14:15.152Z","line":4,"keyword":"Scénario"',
      'cucumber-json',
    ],
    [
      'cucumber json, features with their uri',
      '[{"uri":"features/a.feature","elements":[],"keyword":"Feature"}',
      'cucumber-json',
    ],
    [
      'cucumber messages',
      '{"meta":{"protocolVersion":"32.2.0","implementation":{"version":"12.9.0","name":"cucumber-js"}}}\n{"source":',
      'cucumber-messages',
    ],
    [
      'cucumber messages without meta',
      '{"source":{"data":"Feature: a","uri":"features/a.feature"',
      'cucumber-messages',
    ],
  ] as const)('%s', (_, head, format) => {
    expect(detectFormat(head, 'report.txt')).toBe(format)
  })

  it.each([
    ['empty', ''],
    ['markdown', '# Report\n\n| a | b |'],
    ['another XML document', '<?xml version="1.0"?><html><body/></html>'],
    ['JSON without a known signature', '{"hello": "world"}'],
    ['a JSON array', '[{"name": "a"}]'],
    ['a line of text starting with ok-ish words', 'okay, here is my report'],
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
