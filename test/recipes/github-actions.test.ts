import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ctrfSchemaErrors } from '../helpers/ctrf-schema.js'
import { cleanup, ensureDist, readStore } from '../reporters/helpers.js'
import { sectionBlocks, serve, sh, userProject, yamlOf, type Server } from './helpers.js'

/**
 * The GitHub Actions recipe of docs/ci.md, run step by step as a runner would: the workflow and vitest.config.ts
 * are read from the page, every `run:` step goes through bash with the variables Actions sets, `if:` conditions
 * are evaluated, and actions/cache keeps `.flakewatch.db` between runs (saved only when the job succeeds, as the
 * action does). Only `npm ci` is not run: the project's packages are already in place, from this repository.
 */

interface Step {
  uses?: string
  run?: string
  if?: string
  with?: Record<string, unknown>
  env?: Record<string, string>
}

const blocks = sectionBlocks('docs/ci.md', 'GitHub Actions')
const vitestConfig = blocks.find((b) => b.info === 'ts')!.code
const workflow = yamlOf(blocks.find((b) => b.info === 'yaml')) as {
  on: unknown
  jobs: Record<string, { 'runs-on': string; steps: Step[] }>
}
const uploadSteps = yamlOf(blocks.filter((b) => b.info === 'yaml')[1]) as Step[]

/** A shop whose payment test is as flaky as `shop-state.json` says, which each simulated run rewrites. */
const shopTest = `import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'

const state = JSON.parse(readFileSync(new URL('./shop-state.json', import.meta.url), 'utf8'))
let tries = 0

describe('checkout', () => {
  test('totals the cart', () => expect(state.total === 'broken' ? 90 : 81).toBe(81))
  test('pays', () => {
    tries++
    if (state.payment === 'always' || (state.payment === 'once' && tries === 1)) throw new Error('gateway timeout')
  })
})
`

const ids = { total: 'unit::shop.test.ts::checkout > totals the cart', pays: 'unit::shop.test.ts::checkout > pays' }

const TOKEN = 'recipe-write-token-0123456789'

/**
 * `${{ … }}` and `if:` expressions over the few contexts the recipe uses: literals, `==`, `!=`, `!`, `&&`, `||`
 * and parentheses. Anything else is a context this simulation does not know, and fails the test.
 */
function expression(expr: string, ctx: { ref: string; runId: string; ok: boolean; vars: Record<string, string> }) {
  const values: Record<string, string | boolean> = {
    'always()': true,
    'success()': ctx.ok,
    'failure()': !ctx.ok,
    'github.ref': ctx.ref,
    'github.run_id': ctx.runId,
  }
  const tokens = expr.match(/'[^']*'|"[^"]*"|[\w.]+\(\)|[\w.]+|==|!=|&&|\|\||[!()]|\S/g) ?? []
  let i = 0
  const primary = (): string | boolean => {
    const t = tokens[i++]
    if (t === undefined) throw new Error(`incomplete expression ${expr}`)
    if (t === '!') return !primary()
    if (t === '(') {
      const v = or()
      if (tokens[i++] !== ')') throw new Error(`unbalanced expression ${expr}`)
      return v
    }
    if (/^['"]/.test(t)) return t.slice(1, -1)
    if (t === 'true' || t === 'false') return t === 'true'
    const named = /^(?:vars|secrets)\.(\w+)$/.exec(t)
    if (named) return ctx.vars[named[1]!] ?? ''
    if (t in values) return values[t]!
    throw new Error(`the simulation does not know ${t} in ${expr}`)
  }
  const equality = (): string | boolean => {
    let v = primary()
    while (tokens[i] === '==' || tokens[i] === '!=') {
      const op = tokens[i++]
      const r = primary()
      v = op === '==' ? v === r : v !== r
    }
    return v
  }
  const and = (): string | boolean => {
    let v = equality()
    while (tokens[i] === '&&') {
      i++
      const r = equality()
      v = Boolean(v) && Boolean(r)
    }
    return v
  }
  const or = (): string | boolean => {
    let v = and()
    while (tokens[i] === '||') {
      i++
      const r = and()
      v = Boolean(v) || Boolean(r)
    }
    return v
  }
  const value = or()
  if (i !== tokens.length) throw new Error(`unexpected ${tokens[i]} in ${expr}`)
  return value
}

interface JobRun {
  ok: boolean
  steps: { step: string; exitCode: number | null; output: string }[]
}

/** Runs the workflow's one job for one push. */
async function runJob(
  project: string,
  steps: Step[],
  run: { id: number; ref: string; cache: string; vars?: Record<string, string> },
): Promise<JobRun> {
  const summary = join(project, `step-summary-${run.id}.md`)
  writeFileSync(summary, '')
  const env: Record<string, string> = {
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_RUN_ID: String(run.id),
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_RUN_NUMBER: String(run.id - 1000),
    GITHUB_JOB: 'test',
    GITHUB_WORKFLOW: String((workflow as { name?: string }).name),
    GITHUB_EVENT_NAME: 'push',
    GITHUB_REF: run.ref,
    GITHUB_REF_NAME: run.ref.replace('refs/heads/', ''),
    GITHUB_SHA: `${run.id}`.padEnd(40, 'a'),
    GITHUB_REPOSITORY: 'acme/shop',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_ACTOR: 'octocat',
    GITHUB_WORKSPACE: project,
    GITHUB_STEP_SUMMARY: summary,
    RUNNER_OS: 'Linux',
    RUNNER_ARCH: 'X64',
    RUNNER_NAME: 'GitHub Actions 7',
  }
  const ctx = { ref: run.ref, runId: String(run.id), ok: true, vars: run.vars ?? {} }
  const result: JobRun = { ok: true, steps: [] }
  const post: (() => void)[] = []
  for (const step of steps) {
    const name = step.run ?? step.uses ?? '?'
    if (!expression(step.if ?? 'success()', ctx)) {
      result.steps.push({ step: name, exitCode: null, output: 'skipped' })
      continue
    }
    let exitCode = 0
    let output = ''
    if (step.uses?.startsWith('actions/checkout@')) {
      // The project directory is the checkout.
    } else if (step.uses?.startsWith('actions/setup-node@')) {
      expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(Number(step.with!['node-version']))
    } else if (step.uses?.startsWith('actions/cache@')) {
      const path = String(step.with!.path)
      const saved = join(run.cache, path)
      // restore-keys: the newest entry under the prefix, which this one folder stands for.
      if (existsSync(saved)) copyFileSync(saved, join(project, path))
      post.push(() => {
        if (ctx.ok && existsSync(join(project, path))) copyFileSync(join(project, path), saved)
      })
    } else if (step.run === 'npm ci') {
      // Installed already: node_modules/flakewatch is the built package.
    } else if (step.run) {
      const stepEnv = Object.fromEntries(
        Object.entries(step.env ?? {}).map(([k, v]) => [
          k,
          String(v).replace(/\$\{\{(.*?)\}\}/g, (_, e: string) => String(expression(e.trim(), ctx))),
        ]),
      )
      const ran = await sh(step.run, project, { ...env, ...stepEnv })
      exitCode = ran.exitCode
      output = ran.output
    } else throw new Error(`the simulation does not know the step ${JSON.stringify(step)}`)
    result.steps.push({ step: name, exitCode, output })
    if (exitCode !== 0) ctx.ok = result.ok = false
  }
  for (const p of post) p()
  return result
}

const stepOf = (job: JobRun, prefix: string) => job.steps.find((s) => s.step.startsWith(prefix))!

describe('docs/ci.md, GitHub Actions recipe, run as written', { timeout: 300_000 }, () => {
  let project: string
  let cache: string
  const state = (s: { total?: string; payment: string }) =>
    writeFileSync(join(project, 'shop-state.json'), JSON.stringify(s))
  const runs: JobRun[] = []
  const steps = Object.values(workflow.jobs)[0]!.steps
  let server: Server

  beforeAll(async () => {
    ensureDist()
    project = userProject('github', { 'vitest.config.ts': vitestConfig, 'shop.test.ts': shopTest })
    cache = join(project, '.simulated-actions-cache')
    mkdirSync(cache)
    server = await serve(join(project, 'team.db'), TOKEN)
    // Two pushes to main in which the payment test fails once and passes on its retry.
    for (const id of [1001, 1002]) {
      state({ payment: 'once' })
      runs.push(await runJob(project, steps, { id, ref: 'refs/heads/main', cache }))
    }
  }, 600_000)
  afterAll(async () => {
    await server?.close()
    cleanup(project)
  })

  it('is one job whose steps the simulation knows', () => {
    expect(Object.keys(workflow.jobs)).toEqual(['test'])
    expect(workflow.jobs.test!['runs-on']).toBe('ubuntu-latest')
    expect(steps.filter((s) => s.run?.includes('flakewatch run'))).toHaveLength(1)
  })

  it('passes a run whose only failure passed on retry, and records the retry', async () => {
    for (const job of runs) {
      const tests = stepOf(job, 'npx flakewatch run')
      expect(tests.exitCode, tests.output).toBe(0)
      expect(job.ok).toBe(true)
    }
    const stored = await readStore(join(project, '.flakewatch.db'))
    expect(stored.get(ids.pays)).toMatchObject({ status: 'passed', flakyOnRetry: true, attempts: ['failed', 'passed'] })
    expect(stored.get(ids.total)).toMatchObject({ status: 'passed', flakyOnRetry: false })
  })

  it('keeps the history between runs through the cache, with the CI context of each run', async () => {
    const analyzed = await sh('npx flakewatch analyze --json', project, {})
    expect(analyzed.exitCode, analyzed.output).toBe(0)
    const pays = (JSON.parse(analyzed.output) as { test_id: string; runs: number }[]).find((a) => a.test_id === ids.pays)
    expect(pays?.runs).toBe(2)
    const { openStore } = await import('../../src/store/open.js')
    const store = await openStore({ db: join(project, '.flakewatch.db') })
    try {
      const all = await store.listRuns({})
      expect(all.map((r) => r.runId).sort()).toEqual(['github-1001-1-test', 'github-1002-1-test'])
      expect(all[0]).toMatchObject({
        branch: 'main',
        pipelineId: expect.stringMatching(/^100[12]$/),
        pipelineUrl: expect.stringMatching(/^https:\/\/github\.com\/acme\/shop\/actions\/runs\/100[12]$/),
        env: { os: 'linux', arch: 'x64' },
      })
    } finally {
      await store.close()
    }
  })

  it('writes a CTRF file the official schema accepts, with the retry in it', () => {
    const ctrf = JSON.parse(readFileSync(join(project, 'reports/flakewatch.json'), 'utf8')) as {
      results: { tests: { name: string; retries: number; flaky: boolean }[] }
    }
    expect(ctrfSchemaErrors(ctrf)).toEqual([])
    expect(ctrf.results.tests.find((t) => t.name === 'checkout > pays')).toMatchObject({ retries: 1, flaky: true })
  })

  it('lets quarantine auto on main quarantine the test proven flaky, and never the healthy one', async () => {
    for (const job of runs) expect(stepOf(job, 'npx flakewatch quarantine auto').exitCode).toBe(0)
    const list = await sh('npx flakewatch quarantine list --json', project, {})
    expect(list.exitCode, list.output).toBe(0)
    const quarantined = (JSON.parse(list.output) as { quarantined: { test_id: string }[] }).quarantined
    expect(quarantined.map((q) => q.test_id)).toEqual([ids.pays])
  })

  it('passes a run in which the quarantined test fails every attempt, says so on the job page, and uploads', async () => {
    state({ payment: 'always' })
    // The page's optional upload step, added after the test step as it says, to a real team server.
    expect(uploadSteps).toHaveLength(1)
    const test = steps.findIndex((s) => s.run?.includes('flakewatch run'))
    const withUpload = [...steps.slice(0, test + 1), ...uploadSteps, ...steps.slice(test + 1)]
    const vars = { FLAKEWATCH_URL: server.url, FLAKEWATCH_WRITE_TOKEN: TOKEN }
    const job = await runJob(project, withUpload, { id: 1004, ref: 'refs/heads/main', cache, vars })
    const tests = stepOf(job, 'npx flakewatch run')
    expect(tests.exitCode, tests.output).toBe(0)
    expect(tests.output).toMatch(/gateway timeout/)
    const summary = readFileSync(join(project, 'step-summary-1004.md'), 'utf8')
    expect(summary).toMatch(/flakewatch gate: ✅ pass/)
    expect(summary).toMatch(/\| unit::shop\.test\.ts::checkout &gt; pays \|.*proven flaky/)

    const upload = stepOf(job, 'npx flakewatch upload')
    expect(upload.exitCode, upload.output).toBe(0)
    expect(upload.output).not.toMatch(/warning/)
    const res = await fetch(`${server.url}/api/v1/runs`)
    expect(JSON.stringify(await res.json())).toContain('github-1004-1-test')
  }, 300_000)

  it('fails a run with a failure that is not quarantined, skips quarantine auto off main', async () => {
    state({ total: 'broken', payment: 'never' })
    const job = await runJob(project, steps, { id: 1005, ref: 'refs/heads/feature/coupons', cache })
    const tests = stepOf(job, 'npx flakewatch run')
    expect(tests.exitCode, tests.output).toBe(1)
    expect(tests.output).toMatch(/totals the cart/)
    expect(job.ok).toBe(false)
    expect(stepOf(job, 'npx flakewatch quarantine auto').exitCode).toBeNull()
  }, 300_000)
})
