import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { createApp } from '../../src/server/app.js'
import { resolveConfig } from '../../src/config/load.js'
import { ingestFiles } from '../../src/pipeline/ingest-files.js'
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js'
import { tempDir } from '../server/helpers.js'
import { ROOT, WEB_DIST, type LiveServer } from './helpers.js'

/** A fixed clock just after the newest example run, so that screenshots do not change from one day to the next. */
export const EXAMPLES_NOW = Date.parse('2026-11-22T12:00:00Z')

/** The dashboard over the repository's example reports, as a new user sees it after `npm run demo`. */
export async function startExamplesServer(): Promise<LiveServer> {
  const tmp = tempDir('fw-web-examples-')
  const store = await openSqliteStore(join(tmp.dir, 'fw.db'))
  const summary = await ingestFiles({ store, inputs: [join(ROOT, 'examples', 'reports')], context: {} })
  if (summary.failed.length) throw new Error(`examples failed to ingest: ${JSON.stringify(summary.failed)}`)
  const config = { ...resolveConfig({}), file: null }
  const app = await createApp({ store, config, now: () => EXAMPLES_NOW, webRoot: WEB_DIST })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    store,
    close: async () => {
      await app.close()
      await store.close()
      tmp.cleanup()
    },
  }
}
