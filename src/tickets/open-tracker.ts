import type { TicketsConfig } from '../config/defaults.js'
import { InputError } from '../errors.js'
import { githubTracker } from './trackers/github.js'
import { gitlabTracker } from './trackers/gitlab.js'
import type { TrackerHttpOptions } from './trackers/http.js'
import { jiraTracker } from './trackers/jira.js'
import type { TicketTracker } from './trackers/tracker.js'

/**
 * The configured tracker, with its token from the environment (never from the config file): GitHub
 * `FLAKEWATCH_GITHUB_TOKEN` (else `GITHUB_TOKEN`), GitLab `FLAKEWATCH_GITLAB_TOKEN`, Jira `FLAKEWATCH_JIRA_TOKEN`
 * (and `FLAKEWATCH_JIRA_EMAIL` on Jira Cloud). A missing one is an error naming the variable.
 * @example openTracker(config.tickets, process.env)
 */
export function openTracker(
  t: TicketsConfig,
  env: Record<string, string | undefined>,
  http: TrackerHttpOptions = {},
): TicketTracker {
  const need = (value: string | undefined, names: string): string => {
    if (!value) throw new InputError(`tickets: ${names} is not set: the ${t.tracker} tracker needs a token`)
    return value
  }
  if (t.tracker === 'github') {
    const token = need(env.FLAKEWATCH_GITHUB_TOKEN || env.GITHUB_TOKEN, 'FLAKEWATCH_GITHUB_TOKEN (or GITHUB_TOKEN)')
    return githubTracker({ ...http, repo: t.github!.repo, apiUrl: t.github!.apiUrl, token })
  }
  if (t.tracker === 'gitlab') {
    const token = need(env.FLAKEWATCH_GITLAB_TOKEN, 'FLAKEWATCH_GITLAB_TOKEN')
    return gitlabTracker({ ...http, project: t.gitlab!.project, url: t.gitlab!.url, token })
  }
  const j = t.jira!
  const deployment = j.deployment ?? 'cloud'
  const token = need(env.FLAKEWATCH_JIRA_TOKEN, 'FLAKEWATCH_JIRA_TOKEN')
  const email = deployment === 'cloud' ? need(env.FLAKEWATCH_JIRA_EMAIL, 'FLAKEWATCH_JIRA_EMAIL') : null
  return jiraTracker({ ...http, url: j.url, project: j.project, issueType: j.issueType, deployment, token, email })
}
