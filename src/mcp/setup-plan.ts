import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { z } from 'zod'
import { InputError } from '../errors.js'
import type { McpContext } from './context.js'

/** A runner flakewatch has a recipe for: how to see it in a repository, and the exact lines to add. */
export interface RunnerRecipe {
  runner: string
  /** The runner's own config file and the line that adds flakewatch's reporter to it; null: no reporter needed. */
  reporter: { file: string; line: string } | null
  /** The test command under `flakewatch run`, as a CI step runs it. */
  command: string
  note: string
}

/**
 * One recipe per runner. Every line is printed in docs/mcp.md ("Set-up plans"), where the docs test parses each
 * command with the real CLI, and `test/mcp/setup-plan.test.ts` checks that the plan says nothing the docs do not.
 */
export const RUNNER_RECIPES: Record<string, RunnerRecipe> = {
  vitest: {
    runner: 'vitest',
    reporter: {
      file: 'vitest.config.ts',
      line: "reporters: ['default', ['flakewatch/vitest', { outputFile: 'reports/flakewatch.json' }]],",
    },
    command: 'npx flakewatch run --suite unit --report reports/flakewatch.json -- npx vitest run',
    note: 'the reporter records every retry attempt (set test.retry), which JUnit XML would hide',
  },
  jest: {
    runner: 'jest',
    reporter: {
      file: 'jest.config.js',
      line: "reporters: ['default', ['flakewatch/jest', { outputFile: 'reports/flakewatch.json' }]],",
    },
    command: 'npx flakewatch run --suite unit --report reports/flakewatch.json -- npx jest --ci',
    note: 'retries come from jest.retryTimes(n) in a test file; the reporter records each attempt',
  },
  playwright: {
    runner: 'playwright',
    reporter: {
      file: 'playwright.config.ts',
      line: "reporter: [['list'], ['flakewatch/playwright/reporter', { outputFile: 'reports/flakewatch.json' }]],",
    },
    command: 'npx flakewatch run --suite e2e --report reports/flakewatch.json -- npx playwright test',
    note: 'set retries in playwright.config.ts; every attempt is recorded',
  },
  pytest: {
    runner: 'pytest',
    reporter: null,
    command: 'npx flakewatch run --suite unit --report reports/junit.xml -- pytest --junitxml=reports/junit.xml',
    note: 'with pytest-rerunfailures (--reruns 2) every rerun is recorded as an attempt',
  },
  go: {
    runner: 'go',
    reporter: null,
    command:
      'npx flakewatch run --suite unit --report reports/junit.xml -- gotestsum --junitfile reports/junit.xml --rerun-fails --packages ./...',
    note: 'gotestsum writes JUnit XML; --rerun-fails repeats failed tests, each repeat an attempt',
  },
  maven: {
    runner: 'maven',
    reporter: null,
    command:
      "npx flakewatch run --suite unit --report 'target/surefire-reports/*.xml' -- mvn -B test -Dsurefire.rerunFailingTestsCount=2",
    note: 'Surefire records reruns as flakyFailure and rerunFailure',
  },
  gradle: {
    runner: 'gradle',
    reporter: null,
    command: "npx flakewatch run --suite unit --report 'build/test-results/test/*.xml' -- ./gradlew test",
    note: 'Gradle writes JUnit XML per test class',
  },
  rspec: {
    runner: 'rspec',
    reporter: null,
    command:
      'npx flakewatch run --suite unit --report reports/rspec.xml -- bundle exec rspec --format progress --format RspecJunitFormatter --out reports/rspec.xml',
    note: 'needs the rspec_junit_formatter gem',
  },
  dotnet: {
    runner: 'dotnet',
    reporter: null,
    command:
      "npx flakewatch run --suite unit --report 'TestResults/*.trx' -- dotnet test --logger trx --results-directory TestResults",
    note: 'TRX keeps each test once; flakewatch reads outcome, duration and message',
  },
}

/** The lines a CI needs around the test command (`{command}`), as docs/mcp.md prints them. */
export const CI_RECIPES: Record<string, { ci: string; file: string; lines: string[] }> = {
  github: {
    ci: 'github',
    file: '.github/workflows/test.yml',
    lines: [
      '      - uses: actions/cache@v4',
      "        with: { path: .flakewatch.db, key: 'flakewatch-${{ github.run_id }}', restore-keys: flakewatch- }",
      '      - run: {command}',
      '      - run: npx flakewatch quarantine auto',
      "        if: always() && github.ref == 'refs/heads/main'",
    ],
  },
  gitlab: {
    ci: 'gitlab',
    file: '.gitlab-ci.yml',
    lines: [
      '  script:',
      '    - {command}',
      '  after_script:',
      '    - npx flakewatch upload reports/ --suite unit --url "$FLAKEWATCH_URL" --token "$FLAKEWATCH_WRITE_TOKEN"',
    ],
  },
  other: {
    ci: 'other',
    file: 'your CI job',
    lines: [
      '{command}',
      'npx flakewatch upload reports/ --suite unit --url "$FLAKEWATCH_URL" --token "$FLAKEWATCH_WRITE_TOKEN"',
    ],
  },
}

/** Repository files one plan looks at, at most: a plan reads names, never a whole tree. */
export const SETUP_MAX_FILES = 5_000
const SETUP_MAX_FILE_BYTES = 256 * 1024
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'target', 'vendor', '.venv', 'venv'])

export const setupPlanInput = {
  path: z.string().max(4096).optional().describe('the repository folder (stdio only; default: the working directory)'),
  files: z
    .array(z.object({ path: z.string().max(1000), content: z.string().max(SETUP_MAX_FILE_BYTES).optional() }))
    .max(SETUP_MAX_FILES)
    .optional()
    .describe(
      'the repository described by the client instead: file paths, with the content of package.json, pyproject.toml, requirements*.txt and Gemfile',
    ),
}

interface RepoFile {
  path: string
  content?: string
}

/** The files whose content says which runner a project uses. */
const CONTENT_FILES = /(^|\/)(package\.json|pyproject\.toml|requirements[^/]*\.txt|setup\.cfg|Gemfile)$/

function walk(root: string): RepoFile[] {
  const out: RepoFile[] = []
  const visit = (dir: string, rel: string, depth: number) => {
    if (depth > 4 || out.length >= SETUP_MAX_FILES) return
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return
    }
    for (const name of names) {
      if (out.length >= SETUP_MAX_FILES) return
      const full = join(dir, name)
      const path = rel ? `${rel}/${name}` : name
      let st
      try {
        st = statSync(full)
      } catch {
        continue
      }
      if (st.isDirectory()) {
        if (!SKIP_DIRS.has(name)) visit(full, path, depth + 1)
      } else if (CONTENT_FILES.test(path) && st.size <= SETUP_MAX_FILE_BYTES) {
        out.push({ path, content: readFileSync(full, 'utf8') })
      } else out.push({ path })
    }
  }
  visit(root, '', 0)
  return out
}

function packageDeps(content: string | undefined): Set<string> {
  if (!content) return new Set()
  try {
    const pkg = JSON.parse(content) as Record<string, Record<string, string> | undefined>
    return new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})])
  } catch {
    return new Set()
  }
}

/** Which runners a repository uses, each with the file that says so. */
export function detectRunners(files: RepoFile[]): { runner: string; evidence: string }[] {
  const found = new Map<string, string>()
  const add = (runner: string, evidence: string) => {
    if (!found.has(runner)) found.set(runner, evidence)
  }
  for (const f of files) {
    const base = f.path.split('/').pop()!
    if (base === 'package.json') {
      const deps = packageDeps(f.content)
      if (deps.has('vitest')) add('vitest', `${f.path}: vitest`)
      if (deps.has('jest')) add('jest', `${f.path}: jest`)
      if (deps.has('@playwright/test')) add('playwright', `${f.path}: @playwright/test`)
    }
    if (/^vitest\.config\.(ts|js|mts|mjs)$/.test(base)) add('vitest', f.path)
    if (/^jest\.config\.(ts|js|cjs|mjs|json)$/.test(base)) add('jest', f.path)
    if (/^playwright\.config\.(ts|js)$/.test(base)) add('playwright', f.path)
    if (base === 'pytest.ini' || base === 'conftest.py') add('pytest', f.path)
    if (/^(pyproject\.toml|setup\.cfg|requirements[^/]*\.txt)$/.test(base) && /\bpytest\b/.test(f.content ?? '')) {
      add('pytest', `${f.path}: pytest`)
    }
    if (base === 'go.mod') add('go', f.path)
    if (base === 'pom.xml') add('maven', f.path)
    if (/^build\.gradle(\.kts)?$/.test(base)) add('gradle', f.path)
    if (base === '.rspec' || (base === 'Gemfile' && /\brspec\b/.test(f.content ?? ''))) add('rspec', f.path)
    if (/\.(csproj|fsproj)$/.test(base)) add('dotnet', f.path)
  }
  return [...found].map(([runner, evidence]) => ({ runner, evidence }))
}

/** Which CI systems a repository uses, each with the file that says so. */
export function detectCi(files: RepoFile[]): { ci: string; evidence: string }[] {
  const found = new Map<string, string>()
  for (const f of files) {
    if (/^\.github\/workflows\/[^/]+\.ya?ml$/.test(f.path)) found.set('github', found.get('github') ?? f.path)
    if (f.path === '.gitlab-ci.yml') found.set('gitlab', f.path)
    if (f.path === 'Jenkinsfile') found.set('jenkins', f.path)
    if (f.path === '.circleci/config.yml') found.set('circleci', f.path)
    if (/^\.buildkite\/pipeline\.ya?ml$/.test(f.path)) found.set('buildkite', f.path)
  }
  return [...found].map(([ci, evidence]) => ({ ci, evidence }))
}

/**
 * A set-up plan for a repository: its runners and CI, detected from its files, and for each the exact reporter
 * and CI lines the docs give. Reads names (and a few small manifests), never the code.
 */
export function setupPlan(ctx: McpContext, args: z.infer<z.ZodObject<typeof setupPlanInput>>) {
  let files: RepoFile[]
  if (args.files) files = args.files
  else {
    if (ctx.localRoot === null) {
      throw new InputError('this server reads no files for a client: send the repository as files')
    }
    const root = args.path ? (isAbsolute(args.path) ? args.path : resolve(ctx.localRoot, args.path)) : ctx.localRoot
    if (!existsSync(root)) throw new InputError(`${args.path}: no such folder`)
    files = walk(root)
  }
  const runners = detectRunners(files)
  const cis = detectCi(files)
  const steps = runners.map(({ runner, evidence }) => {
    const r = RUNNER_RECIPES[runner]!
    return {
      runner,
      evidence,
      reporter: r.reporter && { file: r.reporter.file, add_line: r.reporter.line },
      command: r.command,
      note: r.note,
      ci: (cis.length ? cis : [{ ci: 'other', evidence: 'no CI configuration found' }]).map(({ ci }) => {
        const recipe = CI_RECIPES[ci] ?? CI_RECIPES.other!
        return { ci, file: recipe.file, lines: recipe.lines.map((l) => l.replace('{command}', r.command)) }
      }),
    }
  })
  return {
    runners,
    ci: cis,
    files_seen: files.length,
    steps,
    next:
      runners.length === 0
        ? 'no test runner found: any runner that writes JUnit XML, CTRF, Playwright or Jest JSON works under flakewatch run (docs/ingest.md)'
        : 'install flakewatch (npm i -D flakewatch), add the reporter line, then the CI lines; docs/ci.md explains each',
  }
}
