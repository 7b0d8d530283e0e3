/**
 * The project the dashboard shows on a multi-project server: `?project=` in the page URL, so that every link to a
 * view names its project and can be shared. Null: the server's default project (or a single-project server).
 */
export function currentProject(search = location.search): string | null {
  return new URLSearchParams(search).get('project') || null
}

/** `?project=<key>` for links that take no other parameter; empty without a project. */
export function projectQuery(project = currentProject()): string {
  return project === null ? '' : `?project=${encodeURIComponent(project)}`
}

/** A dashboard path in a given project (the project's own dashboard when `project` is null). */
export function inProject(path: string, project: string | null): string {
  return `${path}${projectQuery(project)}`
}
