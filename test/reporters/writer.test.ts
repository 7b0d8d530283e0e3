import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parseReport, sourceFromFile } from '../../src/ingest/index.js'
import { prepareRecording } from '../../src/reporters/build-cases.js'
import { vitestReport, type VitestTestCase } from '../../src/reporters/vitest-cases.js'
import { describeDb, writeRecording, type ReporterIo } from '../../src/reporters/writer.js'
import { openStore } from '../../src/store/open.js'
import { testdir } from '../helpers/run-cli.js'

const dir = testdir({}, 'reporters-writer-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function io(): ReporterIo & { text: () => string } {
  let text = ''
  return { stderr: { write: (s: string) => (text += s) }, env: {}, text: () => text }
}

const test = (name: string, state: 'passed' | 'failed'): VitestTestCase => ({
  type: 'test',
  name,
  parent: { type: 'module' },
  project: { name: '' },
  result: () => ({ state, errors: state === 'failed' ? [{ message: 'boom' }] : undefined }),
  diagnostic: () => ({ duration: 3, retryCount: 0, flaky: false }),
  annotations: () => [],
})

const tests = [test('ok', 'passed'), test('bad', 'failed')]
const report = vitestReport(
  [{ relativeModuleId: 'a.test.ts', project: { name: '' }, children: { allTests: () => tests }, errors: () => [] }],
  { startTime: new Date('2026-03-01T10:00:00Z'), endTime: new Date('2026-03-01T10:00:01Z'), status: 'complete' },
)
const recording = prepareRecording(report, { suite: 'unit', env: {}, source: 'test' })

describe('writeRecording', () => {
  it('stores the run, then recognises the same run as already stored', async () => {
    const db = join(dir, 'fw.db')
    const out = io()
    const target = { kind: 'store' as const, db }
    expect(await writeRecording(recording, target, out, { name: 'vitest' })).toEqual({ ok: true, where: db })
    await writeRecording(recording, target, out, { name: 'vitest' })
    expect(out.text()).toMatch(/^flakewatch: recorded 2 tests \(1 failed, 0 flaky\) as run local-\w+ in .*fw\.db\n/)
    expect(out.text()).toMatch(/already stored in .*fw\.db; nothing written/)
    const store = await openStore({ db })
    expect((await store.stats()).results).toBe(2)
    await store.close()
  })

  it('writes a CTRF file, creating its directory', async () => {
    const file = join(dir, 'reports', 'nested', 'ctrf.json')
    const out = io()
    expect((await writeRecording(recording, { kind: 'ctrf', file }, out, { name: 'vitest' })).ok).toBe(true)
    const parsed = await parseReport(sourceFromFile(file))
    expect(parsed.cases.map((c) => [c.module, c.name, c.status])).toEqual([
      ['a.test.ts', 'ok', 'passed'],
      ['a.test.ts', 'bad', 'failed'],
    ])
    expect(JSON.parse(readFileSync(file, 'utf8')).results.tool).toEqual({ name: 'vitest' })
  })

  it('says on stderr, and does not throw, when the database or the file cannot be written', async () => {
    const directory = join(dir, 'is-a-directory')
    mkdirSync(directory)
    const aFile = join(dir, 'a-file')
    writeFileSync(aFile, 'x')
    for (const target of [
      { kind: 'store' as const, db: directory },
      { kind: 'store' as const, db: join(aFile, 'below-a-file.db') },
      { kind: 'ctrf' as const, file: join(aFile, 'ctrf.json') },
      { kind: 'ctrf' as const, file: directory },
    ]) {
      const out = io()
      const written = await writeRecording(recording, target, out, { name: 'vitest' })
      expect(written.ok).toBe(false)
      expect(out.text()).toMatch(/^flakewatch: could not record this run's results in .+: .+\. The test run's outcome/)
      expect(out.text().split('\n')).toHaveLength(2)
    }
  })

  it('survives a stderr that throws', async () => {
    const broken: ReporterIo = {
      stderr: {
        write: () => {
          throw new Error('EPIPE')
        },
      },
      env: {},
    }
    const target = { kind: 'store' as const, db: join(dir, 'is-a-directory') }
    expect((await writeRecording(recording, target, broken, { name: 'vitest' })).ok).toBe(false)
  })
})

describe('describeDb', () => {
  it('prints PostgreSQL locations without credentials', () => {
    expect(describeDb('postgres://ci:s3cret@db.internal:5432/fw')).toBe('postgres://db.internal:5432/fw')
    expect(describeDb('/tmp/fw.db')).toBe('/tmp/fw.db')
  })
})
