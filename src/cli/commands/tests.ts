import { InputError, NotFoundError } from '../../errors.js'
import { emitJson, type Io } from '../output.js'
import type { StoreFlags } from '../project-option.js'
import { resolveActor } from './quarantine.js'
import { withStore } from '../with-store.js'

export interface TestsCommandOptions extends StoreFlags {
  reason?: string
  actor?: string
  json?: boolean
}

function audit(opts: TestsCommandOptions, io: Io) {
  if (!opts.reason?.trim()) throw new InputError('--reason is required: it is kept in the audit log')
  return { actor: resolveActor(opts.actor, io.env), reason: opts.reason, at: new Date().toISOString() }
}

/**
 * `flakewatch tests merge <from> <into>`: one test known under two ids becomes one, with all its history, when
 * ingest could not tell (see docs/ingest.md). Audited; refused when the two ran side by side in one run.
 */
export async function testsMerge(from: string, into: string, opts: TestsCommandOptions, io: Io): Promise<void> {
  const a = audit(opts, io)
  const outcome = await withStore(opts, io, (store) => store.testNames().mergeTests(from, into, a), 'existing')
  const { results, quarantine, ticket, fingerprints } = outcome
  if (opts.json) return emitJson(io, { from, into, results, quarantine, ticket, fingerprints })
  const carried = [
    quarantine === 'moved' && 'its quarantine moved',
    quarantine === 'released' && `its quarantine ended (${into} keeps its own)`,
    ticket === 'moved' && 'its ticket moved',
    ticket === 'closing' && `its ticket will be closed as a duplicate of ${into}'s`,
    fingerprints > 0 && `${fingerprints} heal fingerprint(s) moved`,
  ].filter(Boolean)
  io.stdout.write(
    `merged ${from} into ${into}: ${results} result(s) moved${carried.map((c) => `; ${c}`).join('')}; ` +
      `${from} is now a name of it\n`,
  )
}

/**
 * `flakewatch tests split <name>`: a name ingest (or a merge) matched to a test is kept apart from it from now on;
 * the next reports that name it give a test of its own. Audited.
 */
export async function testsSplit(name: string, opts: TestsCommandOptions, io: Io): Promise<void> {
  const a = audit(opts, io)
  const done = await withStore(opts, io, (store) => store.testNames().splitName(name, a), 'existing')
  if (!done) throw new NotFoundError(`"${name}" is not a name of another test (see \`flakewatch show\`)`)
  if (opts.json) return emitJson(io, { name, split: true })
  io.stdout.write(`${name} is kept apart from now on; results stored before stay with the test they were given\n`)
}
