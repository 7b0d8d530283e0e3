import { PROJECT_KEY } from '../config/schema.js'
import { InputError } from '../errors.js'

/**
 * The project a run belongs to on a multi-project server: `--project`, else `FLAKEWATCH_PROJECT`, else the CI's
 * repository slug (GitHub, GitLab, Buildkite, CircleCI, Bitbucket). Null when none says: the server's default
 * project takes the run, and a single-project server ignores the key altogether.
 * @example projectKey(undefined, { GITHUB_REPOSITORY: 'acme/shop' }) // 'acme/shop'
 */
export function projectKey(flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  const fromCi =
    env.FLAKEWATCH_PROJECT ||
    env.GITHUB_REPOSITORY ||
    env.CI_PROJECT_PATH ||
    (env.BUILDKITE_ORGANIZATION_SLUG && env.BUILDKITE_PIPELINE_SLUG
      ? `${env.BUILDKITE_ORGANIZATION_SLUG}/${env.BUILDKITE_PIPELINE_SLUG}`
      : '') ||
    (env.CIRCLE_PROJECT_USERNAME && env.CIRCLE_PROJECT_REPONAME
      ? `${env.CIRCLE_PROJECT_USERNAME}/${env.CIRCLE_PROJECT_REPONAME}`
      : '') ||
    env.BITBUCKET_REPO_FULL_NAME ||
    null
  const key = flag ?? fromCi
  if (key !== null && !PROJECT_KEY.test(key)) {
    throw new InputError(
      `${flag === undefined ? 'the CI project' : '--project'}: "${key.slice(0, 200)}" is not a repository slug (letters, digits, _ . - /)`,
    )
  }
  return key
}
