import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { ROOT } from '../helpers/run-cli.js'

export const run = promisify(execFile)

export interface PackResult {
  filename: string
  files: { path: string; mode: number }[]
}

/** Packs the repository into `dir` and returns npm's description of the tarball (its path is `dir/filename`). */
export async function packTarball(dir: string): Promise<PackResult> {
  // `prepack` would rebuild; the global setup and `npm test` already built dist/, so pack what is there.
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  })
  return (JSON.parse(stdout) as PackResult[])[0]!
}

/** The scratch project that the tarball is installed into. */
export const SCRATCH_PACKAGE = '{"name":"scratch","version":"1.0.0","private":true}\n'

/** npm's words for a package whose `engines` refuse the running Node. */
export const ENGINE_WARNING = /EBADENGINE|Unsupported engine/
