import { verifyAuditChain, type AuditVerification } from '../../store/audit-chain.js'
import { emitJson, type Io } from '../output.js'
import type { StoreFlags } from '../project-option.js'
import { withReadStore } from './quarantine.js'

export interface AuditVerifyOptions extends StoreFlags {
  json?: boolean
  output?: string
}

/** Reads the whole quarantine audit trail and checks its hash chain, oldest entry first. */
export function auditVerify(opts: AuditVerifyOptions, io: Io): Promise<AuditVerification> {
  return withReadStore(opts, io, async (store) => verifyAuditChain(await store.listAuditChain()))
}

export function printAuditVerify(v: AuditVerification, opts: AuditVerifyOptions, io: Io): void {
  if (opts.json) {
    const b = v.firstBad
    const firstBad = b && { id: b.id, test_id: b.testId, at: b.at, problem: b.problem }
    return emitJson(io, { ok: v.ok, checked: v.checked, first_bad: firstBad }, opts.output)
  }
  if (v.ok) return void io.stdout.write(`audit trail intact: ${v.checked} entries checked\n`)
  const b = v.firstBad!
  io.stdout.write(
    `audit trail TAMPERED: entry ${b.id} (${b.testId}, ${b.at}): ${b.problem}\n` +
      `${v.checked - 1} entries before it are intact; entries from ${b.id} on cannot be trusted\n`,
  )
}
