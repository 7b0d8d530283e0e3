import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseReport, sourceFromFile } from '../../src/ingest/index.js'
import type { ParsedCase, ParsedReport } from '../../src/ingest/types.js'
import { ROOT, testdir } from '../helpers/run-cli.js'
import { caseNamed, countByStatus } from './helpers.js'
import { runTool, type Ran } from './spawn-tool.js'

/*
 * Issue 29: the runners whose own report formats flakewatch reads, run for real, each with its retries turned on.
 * Debian's packages (golang-go, gotestsum) and the npm devDependencies (tape) write the files; .ci/run installs
 * the Debian ones. Under CI=true a missing tool fails the test instead of skipping it.
 */

const CI = process.env.CI === 'true'
const have = (bin: string) => ['/usr/bin', '/usr/local/bin'].some((d) => existsSync(join(d, bin)))
function need(bin: string): boolean {
  if (!have(bin) && CI) throw new Error(`${bin} not found: .ci/run installs it`)
  return have(bin)
}

const run = runTool

const GO_TEST = `package calc

import (
	"os"
	"testing"
)

func TestAdd(t *testing.T) {
	if 1+1 != 2 {
		t.Fatal("bad")
	}
}

func TestFail(t *testing.T) {
	t.Errorf("expected %d, got %d", 3, 2)
}

func TestSkip(t *testing.T) { t.Skip("not today") }

func TestTable(t *testing.T) {
	for _, name := range []string{"one", "two"} {
		t.Run(name, func(t *testing.T) {
			if name == "two" {
				t.Fatal("two fails")
			}
		})
	}
}

// Fails on its first run in a process tree, passes after: the marker file remembers.
func TestFlaky(t *testing.T) {
	f := os.Getenv("FLAKY_FILE")
	if _, err := os.Stat(f); f != "" && err != nil {
		os.WriteFile(f, []byte("x"), 0o644)
		t.Fatal("first try fails")
	}
}
`

const NODE_TEST = `import { describe, it, test } from 'node:test'
import assert from 'node:assert'
describe('math', () => {
  it('adds', () => assert.equal(1 + 1, 2))
  it('fails', () => assert.equal(1 + 1, 3))
  it.skip('skipped', () => {})
  it.todo('todo')
  describe('nested', () => it('deep', () => {}))
})
it('top level', () => {})
test('with subtests', async (t) => {
  await t.test('inner ok', () => {})
  await t.test('inner bad', () => { throw new Error('inner boom') })
})
`

const TAPE_TEST = `const test = require('tape')
test('adds', (t) => { t.equal(1 + 1, 2); t.ok(true); t.end() })
test('fails', (t) => { t.equal(1 + 1, 3, 'sum is three'); t.ok(true); t.end() })
test('skipped', { skip: true }, (t) => t.end())
`

let dir = ''
const out = (name: string) => join(dir, 'out', name)
const ran: Record<string, Ran> = {}
const haveGo = need('go')
const haveGotestsum = need('gotestsum')

beforeAll(async () => {
  dir = testdir(
    {
      'go/go.mod': 'module example.com/calc\n\ngo 1.19\n',
      'go/calc/calc_test.go': GO_TEST,
      'node/math.test.mjs': NODE_TEST,
      'tape/package.json': '{}\n',
      'tape/math.test.js': TAPE_TEST,
      'out/.keep': '',
    },
    'runner-formats-',
  )
  const goEnv = {
    GOCACHE: join(dir, 'gocache'),
    GOPATH: join(dir, 'gopath'),
    GOFLAGS: '',
    GOPROXY: 'off',
    GOTOOLCHAIN: 'local',
    HOME: dir,
  }
  const shell = (cmd: string, cwd: string, env: Record<string, string> = {}) => run('sh', ['-c', cmd], cwd, env)
  const jobs: [string, Promise<Ran>][] = [
    ['node', shell(`node --test --test-reporter=tap math.test.mjs > ${out('node.tap')}`, join(dir, 'node'))],
    [
      'node-junit',
      run(
        process.execPath,
        ['--test', '--test-reporter=junit', `--test-reporter-destination=${out('node.xml')}`, 'math.test.mjs'],
        join(dir, 'node'),
      ),
    ],
    [
      'tape',
      shell(
        `node ${join(ROOT, 'node_modules', 'tape', 'bin', 'tape')} math.test.js > ${out('tape.tap')}`,
        join(dir, 'tape'),
      ),
    ],
  ]
  if (haveGo) {
    // One go at a time: they share the build cache. -count=2 runs every test twice, the flaky one failing first.
    jobs.push([
      'go',
      (async () => {
        const plain = await shell(`go test -json ./... > ${out('go.json')}`, join(dir, 'go'), goEnv)
        const counted = await shell(`go test -json -count=2 ./... > ${out('go-count.json')}`, join(dir, 'go'), {
          ...goEnv,
          FLAKY_FILE: join(dir, 'flaky-count'),
        })
        let both: Ran = { code: null, output: '' }
        if (haveGotestsum) {
          // gotestsum reruns the failed tests: TestFlaky passes on its rerun, TestFail and TestTable/two never do.
          both = await run(
            'gotestsum',
            [
              '--jsonfile',
              out('gotestsum.json'),
              '--junitfile',
              out('gotestsum.xml'),
              '--rerun-fails=2',
              '--packages',
              './...',
            ],
            join(dir, 'go'),
            { ...goEnv, FLAKY_FILE: join(dir, 'flaky-rerun') },
          )
        }
        return { code: plain.code, output: [plain.output, counted.output, both.output].join('\n') }
      })(),
    ])
  }
  for (const [name, result] of await Promise.all(jobs.map(async ([n, p]) => [n, await p] as const))) ran[name] = result
}, 240_000)

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function report(name: string): Promise<ParsedReport> {
  const path = out(name)
  const outputs = Object.entries(ran).map(([k, r]) => `--- ${k} (exit ${r.code})\n${r.output.slice(-3000)}`)
  expect(existsSync(path), `${name} was not written:\n${outputs.join('\n')}`).toBe(true)
  return parseReport(sourceFromFile(path))
}

const ids = (cases: ParsedCase[]) => cases.map((c) => `${c.module} :: ${c.name}`).sort()

describe.skipIf(!haveGo)('go test -json (golang-go)', () => {
  const PKG = 'example.com/calc/calc'

  it('reads every test and subtest, with package path and test name', async () => {
    const r = await report('go.json')
    expect(r.format).toBe('go-json')
    expect(r.cases.map((c) => [c.module, c.name, c.status])).toEqual([
      [PKG, 'TestAdd', 'passed'],
      [PKG, 'TestFail', 'failed'],
      [PKG, 'TestSkip', 'skipped'],
      [PKG, 'TestTable/one', 'passed'],
      [PKG, 'TestTable/two', 'failed'],
      [PKG, 'TestTable', 'failed'],
      [PKG, 'TestFlaky', 'passed'],
    ])
    expect(caseNamed(r, 'TestFail').message).toBe('calc_test.go:15: expected 3, got 2')
    expect(caseNamed(r, 'TestSkip').message).toBe('calc_test.go:18: not today')
    expect(r.meta.startedAt).toMatch(/^\d{4}-/)
    expect(r.meta.finishedAt! >= r.meta.startedAt!).toBe(true)
  })

  it('-count=2: each test twice as attempts; the one that failed then passed is flaky', async () => {
    const r = await report('go-count.json')
    expect(r.cases).toHaveLength(7)
    expect(r.cases.every((c) => c.attempts.length === 2)).toBe(true)
    const flaky = caseNamed(r, 'TestFlaky')
    expect(flaky).toMatchObject({ status: 'passed', flakyOnRetry: true, message: 'calc_test.go:35: first try fails' })
    expect(flaky.attempts.map((a) => a.status)).toEqual(['failed', 'passed'])
    expect(caseNamed(r, 'TestFail').attempts.map((a) => a.status)).toEqual(['failed', 'failed'])
  })

  it.skipIf(!haveGotestsum)(
    'gotestsum --rerun-fails: reruns are attempts, and its JSON and JUnit give one id per test',
    async () => {
      const json = await report('gotestsum.json')
      const junit = await report('gotestsum.xml')
      expect(json.format).toBe('go-json')
      expect(junit.format).toBe('junit')
      expect(ids(json.cases)).toEqual(ids(junit.cases))
      const flaky = caseNamed(json, 'TestFlaky')
      expect(flaky).toMatchObject({ status: 'passed', flakyOnRetry: true })
      expect(flaky.attempts.map((a) => a.status)).toEqual(['failed', 'passed'])
      expect(caseNamed(junit, 'TestFlaky')).toMatchObject({ status: 'passed', flakyOnRetry: true })
      // Always failing: the first run and both reruns.
      expect(caseNamed(json, 'TestFail').attempts.map((a) => a.status)).toEqual(['failed', 'failed', 'failed'])
      for (const c of json.cases) expect(caseNamed(junit, c.name).status, c.name).toBe(c.status)
    },
  )
})

describe('TAP', () => {
  it('node --test --test-reporter=tap: suites are paths, tests are leaves, as its JUnit names them', async () => {
    const r = await report('node.tap')
    expect(r.format).toBe('tap')
    expect(r.cases.map((c) => [c.module, c.name, c.status])).toEqual([
      ['math', 'adds', 'passed'],
      ['math', 'fails', 'failed'],
      ['math', 'skipped', 'skipped'],
      ['math', 'todo', 'skipped'],
      ['math › nested', 'deep', 'passed'],
      ['', 'top level', 'passed'],
      ['with subtests', 'inner ok', 'passed'],
      ['with subtests', 'inner bad', 'failed'],
    ])
    expect(caseNamed(r, 'fails')).toMatchObject({ message: '2 == 3', errorType: 'testCodeFailure' })
    expect(caseNamed(r, 'fails').file).toMatch(/math\.test\.mjs$/)
    expect(caseNamed(r, 'fails').stack).toMatch(/math\.test\.mjs:5/)
    expect(caseNamed(r, 'adds').durationMs).toBeGreaterThanOrEqual(0)
    const junit = await report('node.xml')
    expect(ids(r.cases)).toEqual(ids(junit.cases))
  })

  it('tape: each test is its `# name` group of assertions', async () => {
    const r = await report('tape.tap')
    expect(r.format).toBe('tap')
    expect(r.cases.map((c) => [c.name, c.status])).toEqual([
      ['adds', 'passed'],
      ['fails', 'failed'],
    ])
    expect(caseNamed(r, 'fails').message).toBe('sum is three (equal)')
    expect(caseNamed(r, 'fails').stack).toMatch(/expected: 3\nactual: +2/)
    expect(countByStatus(r.cases)).toEqual({ passed: 1, failed: 1 })
  })
})
