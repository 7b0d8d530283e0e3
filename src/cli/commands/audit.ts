import {
  formatAuditHead,
  parseAuditHead,
  readAuditChain,
  verifyAuditChain,
  type AuditHead,
  type AuditVerification,
} from '../../store/audit-chain.js'
import { emit, emitJson, type Io } from '../output.js'
import type { StoreFlags } from '../project-option.js'
import { withReadStore } from '../with-store.js'

export interface AuditVerifyOptions extends StoreFlags {
  json?: boolean
  output?: string
  /** A head printed earlier by `audit head` (`<count>:<hash>`): the chain must still pass through it. */
  expect?: string
}

export interface AuditHeadOptions extends StoreFlags {
  json?: boolean
  output?: string
}

/**
 * Walks the whole audit chain, every kind of entry, oldest first: each entry's hash and link, then that the chain
 * ends where the store recorded its last append and passes through the anchored head, when one is given.
 */
export function auditVerify(opts: AuditVerifyOptions, io: Io): Promise<AuditVerification> {
  const expect = opts.expect === undefined ? undefined : parseAuditHead(opts.expect)
  return withReadStore(opts, io, async (store) =>
    verifyAuditChain(readAuditChain(store), { recorded: await store.auditHead(), expect }),
  )
}

export function printAuditVerify(v: AuditVerification, opts: AuditVerifyOptions, io: Io): void {
  if (opts.json) {
    const b = v.firstBad
    return emitJson(
      io,
      {
        ok: v.ok,
        checked: v.checked,
        head: v.ok ? formatAuditHead(v.head) : null,
        first_bad: b && { id: b.id, kind: b.kind, subject: b.subject, at: b.at, problem: b.problem },
        end_problem: v.endProblem,
      },
      opts.output,
    )
  }
  if (v.ok) {
    const anchored = opts.expect ? ', through the anchored head' : ''
    return emit(
      io,
      `audit chain intact: ${v.checked} entries checked${anchored}; head ${formatAuditHead(v.head)}`,
      opts.output,
    )
  }
  if (v.firstBad) {
    const b = v.firstBad
    return emit(
      io,
      `audit chain TAMPERED: entry ${b.id} (${b.kind} ${b.subject}, ${b.at}): ${b.problem}\n` +
        `${v.checked - 1} entries before it are intact; entries from ${b.id} on cannot be trusted`,
      opts.output,
    )
  }
  emit(io, `audit chain TAMPERED: ${v.endProblem}\n${v.checked} entries are intact as far as they go`, opts.output)
}

/** The head the store recorded at its last append: anchor it outside the store (a CI log, a bundle). */
export function auditHead(opts: AuditHeadOptions, io: Io): Promise<AuditHead> {
  return withReadStore(opts, io, (store) => store.auditHead())
}

export function printAuditHead(head: AuditHead, opts: AuditHeadOptions, io: Io): void {
  if (opts.json) {
    return emitJson(io, { count: head.count, hash: head.hash, head: formatAuditHead(head) }, opts.output)
  }
  emit(io, formatAuditHead(head), opts.output)
}
