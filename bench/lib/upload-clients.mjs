// The uploading side of bench/server-load.mjs: `UPLOADERS` clients posting 2,000-test JUnit reports back to back
// for `SECONDS`, each then polling the leaderboard until its report shows. They stand for remote CI machines, so
// server-load.mjs runs this as a process of its own at a lower OS priority: on a 2-core bench machine, generating
// reports must not take the CPU that the server's readers are being measured on. One JSON line per upload on
// stdout: { status, ms, visible_ms }, then { done, failed, failures }. Visibility is polled on `visibleOn`
// (default: the server uploaded to), another instance on the same store in bench/server-two-instances.mjs.
import { junitXml } from './junit-gen.mjs'

const [base, token, seconds, uploaders, tests, visibleOn = base] = process.argv.slice(2)
const end = Date.now() + Number(seconds) * 1000
// A store kept from an earlier run (BENCH_KEEP) holds that run's uploads: this run's run ids and markers must be new
// to it, or an upload would merge into an old run and its marker would be found before the upload is in.
const session = Date.now().toString(36)
const say = (row) => process.stdout.write(`${JSON.stringify(row)}\n`)
let failed = 0
const failures = []
const fail = (what) => {
  failed++
  if (failures.length < 5) failures.push(what)
}

async function uploader(u) {
  for (let k = 0; Date.now() < end; k++) {
    const runIndex = 100_000 + u * 10_000 + k
    // Ended by ';', so that the marker of upload 1 is not also found in those of uploads 10 to 19.
    const marker = `visible ${session} ${u}:${k};`
    const xml = junitXml(runIndex, Number(tests), { stamp: Date.now() - runIndex * 3_600_000 }).replace(
      '</testsuite>',
      `<testcase classname="bench.Visibility" name="${marker}"/></testsuite>`,
    )
    const t = performance.now()
    let res
    try {
      res = await fetch(`${base}/api/v1/reports?suite=bench&run_id=load-${session}-${runIndex}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/xml' },
        body: xml,
      })
      await res.arrayBuffer()
    } catch (error) {
      fail(`POST /api/v1/reports: ${error.message}`)
      continue
    }
    const ms = performance.now() - t
    if (res.status === 503) {
      say({ status: 503, ms })
      await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000))
      continue
    }
    if (res.status !== 201) {
      fail(`POST /api/v1/reports ${res.status}`)
      say({ status: res.status, ms })
      continue
    }
    // Visible: the leaderboard finds the upload's own marker test.
    const at = performance.now()
    let visible = null
    while (performance.now() - at < 30_000) {
      try {
        const r = await fetch(`${visibleOn}/api/v1/leaderboard?limit=1&search=${encodeURIComponent(marker)}`)
        if (!r.ok) fail(`GET /api/v1/leaderboard?search= ${r.status}`)
        else if ((await r.json()).total === 1) {
          visible = performance.now() - at
          break
        }
      } catch (error) {
        fail(`GET /api/v1/leaderboard?search=: ${error.message}`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    if (visible === null) fail(`upload ${marker} not visible after 30 s`)
    say({ status: 201, ms, visible_ms: visible })
  }
}

await Promise.all(Array.from({ length: Number(uploaders) }, (_, u) => uploader(u)))
say({ done: true, failed, failures })
