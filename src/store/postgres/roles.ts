import { quoteIdent } from './migrations.js'

export interface RoleGrantsOptions {
  /** The schema the store lives in (`?schema=` in its URL); default `public`. */
  schema?: string
  /** The role the server and the CI jobs connect as. */
  appRole: string
}

/**
 * Every table a trigger keeps append-only (`fw_append_only`). The grants must name each one: a trigger alone is
 * not enough, since a role allowed UPDATE could still try, and the test compares this list with the triggers the
 * migrations actually create, so that a new audit table cannot be forgotten here.
 */
export const APPEND_ONLY_TABLES = ['audit_log', 'heal_log'] as const

/**
 * Tables the application role may only read: the audit chain's head moves by a SECURITY DEFINER trigger on each
 * append, never by the role's own writes.
 */
export const READ_ONLY_TABLES = ['audit_head', 'schema_meta'] as const

/**
 * The grants that give the application role what flakewatch needs at run time and nothing more, to be run by the
 * migration role (the owner of every table) after each migration. The application role reads and writes data,
 * but on the audit chain and the heal log it may only read and append, and the chain's head it may only read; it owns nothing, so it can neither disable
 * nor drop the triggers that keep those tables append-only, nor change the schema.
 * @example for (const stmt of postgresRoleGrants({ schema: 'flakewatch', appRole: 'flakewatch_app' })) console.log(`${stmt};`)
 */
export function postgresRoleGrants(opts: RoleGrantsOptions): string[] {
  const schema = quoteIdent(opts.schema ?? 'public')
  const app = quoteIdent(opts.appRole)
  const appendOnly = APPEND_ONLY_TABLES.map((t) => `${schema}.${t}`).join(', ')
  const readOnly = READ_ONLY_TABLES.map((t) => `${schema}.${t}`).join(', ')
  return [
    `GRANT USAGE ON SCHEMA ${schema} TO ${app}`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${app}`,
    `REVOKE UPDATE, DELETE, TRUNCATE ON ${appendOnly} FROM ${app}`,
    `REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ${readOnly} FROM ${app}`,
    `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${schema} TO ${app}`,
  ]
}
