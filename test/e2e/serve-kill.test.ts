import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { spawnServe, testdir } from '../helpers/run-cli.js'

const TOKEN = 'kill-token-0123456789ab'

/** `pid`'s state letter and parent, from /proc, or null once it is gone (a zombie counts as gone: it runs nothing). */
function procOf(pid: number): { state: string; ppid: number } | null {
  const file = `/proc/${pid}/stat`
  if (!existsSync(file)) return null
  try {
    const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ')
    return fields[0] === 'Z' ? null : { state: fields[0]!, ppid: Number(fields[1]) }
  } catch {
    return null
  }
}

/** CPU time `pid` has used, in clock ticks (user + system), or 0 once it is gone. */
function cpuTicks(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** The live children of `parent`. */
function childrenOf(parent: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => procOf(pid)?.ppid === parent)
}

/** A JUnit report large enough that storing it takes a while: the kill lands while it is being written. */
function bigReport(cases: number): string {
  const body = Array.from(
    { length: cases },
    (_, i) =>
      `<testcase classname="pkg.Mod${i % 97}" name="case ${i} with a longer name" time="0.0${i % 10}">${
        i % 5 === 0 ? `<failure message="expected ${i}">at line ${i}</failure>` : ''
      }</testcase>`,
  )
  return `<?xml version="1.0"?>\n<testsuite name="big">\n${body.join('\n')}\n</testsuite>\n`
}

describe.skipIf(process.platform !== 'linux')('kill -9 of serve with an upload in flight (issue 33)', () => {
  it(
    'leaves no worker behind, and stores nothing the client was never answered for',
    { timeout: 300_000 },
    async () => {
      const dir = testdir({ 'big.xml': bigReport(150_000) }, 'kill-')
      const db = join(dir, 'fw.db')
      // Created first, so that the killed server is not the one that made the schema.
      await (await openSqliteStore(db)).close()
      const server = await spawnServe(['--db', db], { cwd: dir, env: { FLAKEWATCH_WRITE_TOKEN: TOKEN } })
      let answered = false
      const upload = fetch(`${server.url}/api/v1/reports?name=big.xml&suite=unit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/xml' },
        body: readFileSync(join(dir, 'big.xml')),
      }).then(
        () => (answered = true),
        () => undefined,
      )
      // The upload is in a worker once the server counts it as running.
      await expect
        .poll(
          async () => {
            const health = (await (await fetch(`${server.url}/healthz`)).json()) as { uploads: { running: number } }
            return health.uploads.running
          },
          { timeout: 120_000, interval: 50 },
        )
        .toBe(1)
      const workers = childrenOf(server.pid)
      expect(workers.length).toBeGreaterThanOrEqual(1)
      // Kill once a worker is well into the report (half a second of CPU), not while the message is still on its way.
      await expect
        .poll(() => Math.max(...workers.map(cpuTicks)), { timeout: 120_000, interval: 20 })
        .toBeGreaterThan(50)
      process.kill(server.pid, 'SIGKILL')
      await upload
      // Were it answered, the upload would have been stored with the server alive: the kill came too late to tell.
      expect(answered, 'the upload finished before the kill; make the report larger').toBe(false)

      // Each worker sees its channel close and exits, rolling its transaction back.
      await expect.poll(() => workers.filter((pid) => procOf(pid) !== null), { timeout: 120_000 }).toEqual([])
      const store = await openSqliteStore(db)
      try {
        expect((await store.stats()).runs).toBe(0)
        expect((await store.stats()).results).toBe(0)
      } finally {
        await store.close()
      }
      // A server started afterwards gets the write lock and stores the same upload.
      writeFileSync(join(dir, 'small.xml'), bigReport(10))
      const again = await spawnServe(['--db', db], { cwd: dir, env: { FLAKEWATCH_WRITE_TOKEN: TOKEN } })
      try {
        const res = await fetch(`${again.url}/api/v1/reports?name=small.xml&suite=unit`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/xml' },
          body: readFileSync(join(dir, 'small.xml')),
        })
        expect(res.status).toBe(201)
      } finally {
        await again.close()
      }
    },
  )
})
