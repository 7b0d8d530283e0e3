import { cpSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, runCli, testdir } from '../helpers/run-cli.js'

const DOC = readFileSync(join(ROOT, 'docs', 'quarantine.md'), 'utf8')

/** The first fenced block after `marker`, with its language. */
function blockAfter(marker: string): { lang: string; body: string } {
  const from = DOC.indexOf(marker)
  expect(from, `docs/quarantine.md no longer has "${marker}"`).toBeGreaterThan(-1)
  const m = /```(\w*)\n([\s\S]*?)```/.exec(DOC.slice(from))
  expect(m, `no code block after "${marker}"`).not.toBeNull()
  return { lang: m![1]!, body: m![2]! }
}

/** Shell words of one command: continuation lines joined, single quotes kept literal (all the docs use). */
function commands(sh: string): string[][] {
  return sh
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'))
    .map((line) => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((w) => w[1] ?? w[2]!))
}

const report = (message: string) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="checkout" tests="2" failures="1">
  <testcase classname="checkout.spec.ts" name="adds to cart" time="1.2"/>
  <testcase classname="checkout.spec.ts" name="pays" time="30.0"><failure message="${message}">${message}
    at checkout.spec.ts:14:5</failure></testcase>
</testsuite>
`

describe('docs/quarantine.md: forgive timeouts on the arm64 runners for two weeks', { timeout: 120_000 }, () => {
  it('runs as written: the rule forgives a timeout on arm64 and nothing else, and the gate says which rule', async () => {
    const example = blockAfter('Example: forgive timeouts on the arm64 runners for two weeks.')
    expect(example.lang).toBe('sh')
    const [add, gate, ...rest] = commands(example.body)
    expect(rest).toEqual([])
    expect(add!.slice(0, 4)).toEqual(['flakewatch', 'quarantine', 'rule', 'add'])
    expect(gate!.slice(0, 2)).toEqual(['flakewatch', 'gate'])

    // The example project as `flakewatch demo` writes it: the gate reads its examples/arm64/checkout.xml.
    // No --db anywhere: both commands use the default store in the working directory, as a user's would.
    const dir = testdir({})
    cpSync(join(ROOT, 'examples/arm64'), join(dir, 'examples/arm64'), { recursive: true })
    const added = await runCli(add!.slice(1), { cwd: dir })
    expect(added.exitCode, added.stderr).toBe(0)

    const onArm = await runCli(gate!.slice(1), { cwd: dir })
    expect(onArm.exitCode, onArm.stdout + onArm.stderr).toBe(0)
    // The output the docs show, line for line, with the expiry of today's `--expires 14d`.
    const expiry = /expires (\d{4}-\d\d-\d\d)/.exec(onArm.stdout)?.[1]
    expect(expiry, onArm.stdout).toBeDefined()
    const shown = blockAfter('`--junit-out` copy:').body.replace(/expires \d{4}-\d\d-\d\d/, `expires ${expiry}`)
    for (const line of shown.trim().split('\n')) expect(onArm.stdout).toContain(line.trim())

    const onAmd = await runCli(
      gate!.slice(1).map((w) => (w === 'runner=arm64' ? 'runner=amd64' : w)),
      { cwd: dir },
    )
    expect(onAmd.exitCode, onAmd.stdout).toBe(1)

    const other = testdir({ 'examples/arm64/checkout.xml': report('expected 200, got 500') })
    expect((await runCli(add!.slice(1), { cwd: other })).exitCode).toBe(0)
    const otherFailure = await runCli(gate!.slice(1), { cwd: other })
    expect(otherFailure.exitCode, otherFailure.stdout).toBe(1)
  })
})
