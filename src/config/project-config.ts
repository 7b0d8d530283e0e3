import { InputError } from '../errors.js'
import type { ResolvedConfig } from './load.js'

/**
 * The config as one project of a multi-project config sees it: the project's store, tokens and webhooks (its own
 * `webhooks`, else the shared `notifications.webhooks`), every other setting shared. `serve` builds each project's
 * app from it and `--project <key>` selects it on the CLI, so that both work on the same store and webhooks.
 * An unknown key is a usage error naming the known ones.
 * @example projectConfig(loadConfig(), 'acme/shop').db // the shop's store
 */
export function projectConfig(config: ResolvedConfig, key: string): ResolvedConfig {
  const project = Object.hasOwn(config.projects, key) ? config.projects[key] : undefined
  if (!project) {
    const known = Object.keys(config.projects)
    throw new InputError(
      `no project "${key}" in ${config.file ?? 'the config (no config file was found)'}: ` +
        (known.length ? `the projects are ${known.map((k) => `"${k}"`).join(', ')}` : 'it has no projects'),
    )
  }
  return {
    ...config,
    db: project.db,
    server: {
      ...config.server,
      writeToken: null,
      writeTokens: project.writeTokens ?? {},
      readToken: project.readToken,
    },
    notifications: { ...config.notifications, webhooks: project.webhooks ?? config.notifications.webhooks },
    tickets: project.tickets ?? config.tickets,
  }
}
