import type { ProjectListResponse } from '../server/api-types.js'
import { ApiError, getAs, tokens } from './api.js'
import { h } from './dom.js'
import { currentProject, inProject } from './project.js'

/** What the server says about projects: none (a single-project server), or the list this tab's token reaches. */
export type ProjectsState = { multi: false } | { multi: true; list: ProjectListResponse | null }

let projects: Promise<ProjectsState> | null = null

/**
 * Asks the server once per page load: a single-project server lists no projects; a multi-project one lists those
 * the organisation token (or else this project's read token) reaches, or answers 401 to a tab without a token.
 */
export function loadProjects(): Promise<ProjectsState> {
  projects ??= getAs<ProjectListResponse>('/projects', tokens.org()).then(
    // A single-project server lists none.
    (list): ProjectsState => (list.projects.length === 0 ? { multi: false } : { multi: true, list }),
    (error: unknown): ProjectsState => {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403))
        return { multi: true, list: null }
      return { multi: false }
    },
  )
  return projects
}

/** Pages that exist in every project; any other (a test's page) switches to the leaderboard. */
const SHARED_PAGES = new Set(['/', '/heatmap', '/trends', '/impact', '/quarantine', '/overview'])

/**
 * The project switcher: a select when the token reaches several projects, the project's key when it reaches one,
 * nothing on a single-project server. Switching loads the same page of the other project, without the filters
 * (suites and branches differ between projects); the project stays in the URL.
 */
export function projectSwitcher(): HTMLElement {
  const slot = h('span', { class: 'project-switch' })
  void loadProjects().then((state) => {
    if (!state.multi || !state.list) return
    const keys = state.list.projects.map((p) => p.key)
    const current = currentProject() ?? state.list.default ?? keys[0] ?? null
    if (keys.length <= 1) {
      if (current !== null) slot.append(h('span', { class: 'project-key', title: 'project' }, current))
      return
    }
    const select = h(
      'select',
      {
        name: 'project',
        'aria-label': 'project',
        on: {
          change: () => {
            const path = location.pathname.replace(/\/+$/, '') || '/'
            location.assign(inProject(SHARED_PAGES.has(path) ? path : '/', select.value))
          },
        },
      },
      ...keys.map((k) => h('option', { value: k }, k)),
    )
    if (current !== null && !keys.includes(current)) select.append(h('option', { value: current }, current))
    select.value = current ?? ''
    slot.append(select)
  })
  return slot
}
