import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/open.js'
import { cleanup, ensureDist } from '../reporters/helpers.js'
import { sectionBlocks, serve, sh, userProject, yamlOf, type Server, type Shell } from './helpers.js'

/**
 * The GitLab CI recipe of docs/ci.md, run as a runner would: `script` lines in one bash that stops at the first
 * failing line, then `after_script` in a new shell with CI_JOB_STATUS set, with the variables GitLab sets and the
 * two CI/CD variables the page asks for, uploading to a real `flakewatch serve` on 127.0.0.1. Only `npm ci` is
 * not run: the project's packages are already in place, from this repository.
 */

interface Job {
  image: string
  script: string[]
  after_script: string[]
  artifacts: { when: string; reports: { junit: string } }
}

const gitlabCi = yamlOf(sectionBlocks('docs/ci.md', 'GitLab CI').find((b) => b.info === 'yaml')) as Record<string, Job>

const shopTest = `const { readFileSync } = require('node:fs')
const state = JSON.parse(readFileSync(__dirname + '/shop-state.json', 'utf8'))

describe('checkout', () => {
  test('totals the cart', () => expect(81).toBe(81))
  test('pays', () => {
    if (state.payment === 'fails') {
      // GitLab shows a screenshot named this way in the test report.
      console.log('[[ATTACHMENT|screenshots/pays.png]]')
      throw new Error('gateway timeout')
    }
  })
})
`

const TOKEN = 'recipe-write-token-0123456789'

interface JobRun {
  script: Shell
  afterScript: Shell
}

describe('docs/ci.md, GitLab CI recipe, run as written', { timeout: 300_000 }, () => {
  let project: string
  let server: Server
  const teamDb = () => join(project, 'team.db')
  const job = Object.values(gitlabCi)[0]!

  async function runJob(id: number, payment: 'passes' | 'fails'): Promise<JobRun> {
    writeFileSync(join(project, 'shop-state.json'), JSON.stringify({ payment }))
    const env: Record<string, string> = {
      CI: 'true',
      GITLAB_CI: 'true',
      CI_SERVER_URL: 'https://gitlab.example.com',
      CI_PROJECT_ID: '42',
      CI_PROJECT_DIR: project,
      CI_PROJECT_PATH: 'acme/shop',
      CI_PIPELINE_ID: String(id * 10),
      CI_PIPELINE_URL: `https://gitlab.example.com/acme/shop/-/pipelines/${id * 10}`,
      CI_JOB_ID: String(id),
      CI_JOB_NAME: 'test',
      CI_JOB_URL: `https://gitlab.example.com/acme/shop/-/jobs/${id}`,
      CI_COMMIT_SHA: `${id}`.padEnd(40, 'b'),
      CI_COMMIT_BRANCH: 'main',
      CI_COMMIT_REF_NAME: 'main',
      CI_DEFAULT_BRANCH: 'main',
      CI_RUNNER_DESCRIPTION: 'shared-runner-3',
      CI_RUNNER_ID: '3',
      GITLAB_USER_LOGIN: 'alice',
      // The recipe's CI/CD variables.
      FLAKEWATCH_URL: server.url,
      FLAKEWATCH_WRITE_TOKEN: TOKEN,
    }
    const script = await sh(job.script.filter((line) => line !== 'npm ci').join('\n'), project, env)
    const status = script.exitCode === 0 ? 'success' : 'failed'
    const afterScript = await sh(job.after_script.join('\n'), project, { ...env, CI_JOB_STATUS: status })
    return { script, afterScript }
  }

  const runs: JobRun[] = []

  beforeAll(async () => {
    ensureDist()
    project = userProject('gitlab', {
      'package.json': JSON.stringify({ name: 'shop', private: true, jest: { testEnvironment: 'node' } }),
      'shop.test.js': shopTest,
    })
    server = await serve(join(project, 'team.db'), TOKEN)
    runs.push(await runJob(501, 'passes'))
    runs.push(await runJob(502, 'fails'))
  }, 600_000)
  afterAll(async () => {
    await server?.close()
    cleanup(project)
  })

  it('is one job on a Node 20 image whose script the simulation can run', () => {
    expect(Object.keys(gitlabCi)).toEqual(['test'])
    expect(job.image).toBe('node:20')
    expect(job.script[0]).toBe('npm ci')
    expect(job.artifacts).toMatchObject({ when: 'always' })
  })

  it('passes a green job without a quarantine file, with a warning', () => {
    const [first] = runs
    expect(first!.script.exitCode, first!.script.output).toBe(0)
    expect(first!.script.output).toMatch(/warning: .*quarantine\.json/)
    expect(existsSync(join(project, job.artifacts.reports.junit))).toBe(true)
  })

  it('fails a job with a failure that is not quarantined', () => {
    const second = runs[1]!
    expect(second.script.exitCode, second.script.output).toBe(1)
    expect(second.script.output).toMatch(/gateway timeout/)
  })

  it('uploads every job, green or red, to the team server with the job context', async () => {
    for (const r of runs) {
      expect(r.afterScript.exitCode, r.afterScript.output).toBe(0)
      expect(r.afterScript.output).not.toMatch(/warning|error/)
    }
    const store = await openStore({ db: teamDb(), readOnly: true, mustExist: true })
    try {
      const stored = await store.listRuns({})
      const byId = new Map(stored.map((r) => [r.runId, r]))
      expect([...byId.keys()].sort()).toEqual(['gitlab-501', 'gitlab-502'])
      expect(byId.get('gitlab-502')).toMatchObject({
        suite: 'unit',
        branch: 'main',
        revision: '502'.padEnd(40, 'b'),
        pipelineId: '5020',
        pipelineUrl: 'https://gitlab.example.com/acme/shop/-/pipelines/5020',
        jobId: '502',
        jobUrl: 'https://gitlab.example.com/acme/shop/-/jobs/502',
        jobStatus: 'failed',
        runnerId: 'shared-runner-3',
      })
      expect(byId.get('gitlab-501')).toMatchObject({ jobStatus: 'success' })
    } finally {
      await store.close()
    }
  })

  it('passes once the failing test is in the reviewed quarantine file, and reports it as skipped', async () => {
    const analyzed = await sh(`npx flakewatch analyze --db team.db --json`, project, {})
    expect(analyzed.exitCode, analyzed.output).toBe(0)
    const pays = (JSON.parse(analyzed.output) as { test_id: string }[]).find((a) => a.test_id.endsWith('pays'))!
    expect(pays).toBeDefined()
    // What the page says to do: quarantine, export the file, commit it.
    const add = await sh(
      `npx flakewatch quarantine add '${pays.test_id}' --db team.db --reason 'gateway flake' --actor alice && ` +
        'npx flakewatch quarantine export --db team.db',
      project,
      {},
    )
    expect(add.exitCode, add.output).toBe(0)
    expect(existsSync(join(project, '.flakewatch/quarantine.json'))).toBe(true)

    const third = await runJob(503, 'fails')
    expect(third.script.exitCode, third.script.output).toBe(0)
    expect(third.afterScript.exitCode, third.afterScript.output).toBe(0)
    const gated = readFileSync(join(project, job.artifacts.reports.junit), 'utf8')
    const testcase = /<testcase[^>]*name="[^"]*pays"[^>]*>[\s\S]*?<\/testcase>/.exec(gated)?.[0]
    expect(testcase).toMatch(/<skipped message="[^"]*gateway flake/)
    expect(testcase).not.toMatch(/<failure/)
  }, 300_000)
})
