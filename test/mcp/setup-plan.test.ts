import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CI_RECIPES, RUNNER_RECIPES, detectCi, detectRunners } from '../../src/mcp/setup-plan.js'
import { ROOT } from '../helpers/run-cli.js'

const DOC = readFileSync(join(ROOT, 'docs', 'mcp.md'), 'utf8')

describe('set-up plans say only what the docs say', () => {
  it.each(Object.values(RUNNER_RECIPES))('$runner: its reporter line and its command are in docs/mcp.md', (r) => {
    if (r.reporter) expect(DOC).toContain(`\`${r.reporter.file}\`: \`${r.reporter.line}\``)
    expect(DOC).toContain(`\n${r.command}\n`)
  })
  it.each(Object.values(CI_RECIPES))('$ci: its lines are in docs/mcp.md', (c) => {
    for (const line of c.lines) expect(DOC).toContain(line.replace('{command}', '{command}'))
  })
  it('the GitHub lines are those of the recipe that test/recipes runs (docs/ci.md)', () => {
    const ci = readFileSync(join(ROOT, 'docs', 'ci.md'), 'utf8')
    for (const line of CI_RECIPES.github!.lines.filter((l) => !l.includes('{command}'))) expect(ci).toContain(line)
  })
})

describe('detecting runners and CI from a repository', () => {
  it('reads dependencies, config files and manifests', () => {
    const runners = detectRunners([
      { path: 'package.json', content: JSON.stringify({ devDependencies: { jest: '29' } }) },
      { path: 'web/playwright.config.ts' },
      { path: 'api/pyproject.toml', content: '[tool.pytest.ini_options]\naddopts = "-q"\n' },
      { path: 'svc/go.mod' },
      { path: 'java/pom.xml' },
      { path: 'Gemfile', content: "gem 'rspec'\n" },
      { path: 'src/App.Tests/App.Tests.csproj' },
      { path: 'broken/package.json', content: '{ not json' },
    ])
    expect(runners.map((r) => r.runner)).toEqual(['jest', 'playwright', 'pytest', 'go', 'maven', 'rspec', 'dotnet'])
    expect(runners[2]).toEqual({ runner: 'pytest', evidence: 'api/pyproject.toml: pytest' })
  })
  it('does not take a manifest that does not name the runner for one that does', () => {
    expect(
      detectRunners([
        { path: 'requirements.txt', content: 'requests\n' },
        { path: 'Gemfile', content: "gem 'rails'" },
      ]),
    ).toEqual([])
  })
  it('finds GitHub Actions, GitLab CI, Jenkins, CircleCI and Buildkite', () => {
    const ci = detectCi([
      { path: '.github/workflows/test.yml' },
      { path: '.github/workflows/lint.yaml' },
      { path: '.gitlab-ci.yml' },
      { path: 'Jenkinsfile' },
      { path: '.circleci/config.yml' },
      { path: '.buildkite/pipeline.yml' },
      { path: 'docs/.gitlab-ci.yml' },
    ])
    expect(ci).toEqual([
      { ci: 'github', evidence: '.github/workflows/test.yml' },
      { ci: 'gitlab', evidence: '.gitlab-ci.yml' },
      { ci: 'jenkins', evidence: 'Jenkinsfile' },
      { ci: 'circleci', evidence: '.circleci/config.yml' },
      { ci: 'buildkite', evidence: '.buildkite/pipeline.yml' },
    ])
  })
})
