import { spawn } from 'node:child_process'

export interface Ran {
  code: number | null
  output: string
}

/**
 * Runs a tool as a test runner's child, its stdout and stderr together. The vitest worker's own variables are
 * removed, so that a runner started here does not think it is a worker of ours.
 * @example const r = await runTool(process.execPath, ['--test'], dir)
 */
export function runTool(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  const clean: NodeJS.ProcessEnv = { ...process.env, ...env }
  for (const k of Object.keys(clean)) if (/^(VITEST|JEST_WORKER|TEST_WORKER|NODE_TEST)/.test(k)) delete clean[k]
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: clean })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })
}
