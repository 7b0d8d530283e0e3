// Runs the named npm scripts at once and prints each one's output whole, in the order named: build, typecheck and
// lint are mostly single-threaded and read only the sources (no test or config imports dist/), so on two cores they
// take about lint's time instead of the sum. Exits with the first failure's code.
import { spawn } from 'node:child_process'

const npm = process.env.npm_execpath
const runs = process.argv.slice(2).map(
  (name) =>
    new Promise((resolve) => {
      const [cmd, args] = npm ? [process.execPath, [npm, 'run', '-s', name]] : ['npm', ['run', '-s', name]]
      const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] })
      const out = []
      child.stdout.on('data', (d) => out.push(d))
      child.stderr.on('data', (d) => out.push(d))
      child.on('error', (e) => resolve({ name, code: 1, out: [Buffer.from(`${e.message}\n`)] }))
      child.on('close', (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), out }))
    }),
)
let failed = 0
for (const run of runs) {
  const { name, code, out } = await run
  process.stdout.write(Buffer.concat(out))
  if (code !== 0) {
    process.stderr.write(`npm run ${name} failed (exit ${code})\n`)
    failed ||= code
  }
}
process.exit(failed)
