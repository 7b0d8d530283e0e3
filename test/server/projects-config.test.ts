import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/config/load.js'
import { projectKey } from '../../src/pipeline/project-key.js'

describe('the project key', () => {
  it('comes from --project, else FLAKEWATCH_PROJECT, else the CI repository slug, else nothing', () => {
    expect(projectKey('acme/web', { GITHUB_REPOSITORY: 'acme/shop' })).toBe('acme/web')
    expect(projectKey(undefined, { FLAKEWATCH_PROJECT: 'acme/x', GITHUB_REPOSITORY: 'acme/shop' })).toBe('acme/x')
    expect(projectKey(undefined, { GITHUB_REPOSITORY: 'acme/shop' })).toBe('acme/shop')
    expect(projectKey(undefined, { CI_PROJECT_PATH: 'group/sub/repo' })).toBe('group/sub/repo')
    expect(projectKey(undefined, { BUILDKITE_ORGANIZATION_SLUG: 'acme', BUILDKITE_PIPELINE_SLUG: 'shop' })).toBe(
      'acme/shop',
    )
    expect(projectKey(undefined, { CIRCLE_PROJECT_USERNAME: 'acme', CIRCLE_PROJECT_REPONAME: 'api' })).toBe('acme/api')
    expect(projectKey(undefined, {})).toBeNull()
  })

  it('refuses a key that is not a repository slug, naming where it came from', () => {
    expect(() => projectKey('../etc', {})).toThrow(/--project: "..\/etc" is not a repository slug/)
    expect(() => projectKey(undefined, { FLAKEWATCH_PROJECT: 'a b' })).toThrow(/the CI project/)
  })
})

describe('projects in the config', () => {
  it('needs a store and a read token per project', () => {
    expect(() => resolveConfig({ projects: { 'acme/shop': { db: 'shop.db' } } })).toThrow(
      /projects\.acme\/shop\.readToken/,
    )
    expect(() => resolveConfig({ projects: { 'bad key': { db: 'x.db', readToken: 'r'.repeat(8) } } })).toThrow(
      /projects.bad key: Invalid key/,
    )
    const c = resolveConfig({
      projects: { 'acme/shop': { db: 'shop.db', readToken: 'read-token-1', writeTokens: { ci: 'write-token-1' } } },
      server: { defaultProject: 'acme/shop', orgToken: 'org-token-1' },
    })
    expect(c.projects['acme/shop']).toEqual({
      db: 'shop.db',
      readToken: 'read-token-1',
      writeTokens: { ci: 'write-token-1' },
    })
    expect(c.server).toMatchObject({ defaultProject: 'acme/shop', orgToken: 'org-token-1' })
    expect(resolveConfig({}).projects).toEqual({})
  })
})
