import { describe, expect, it } from 'vitest'
import { resolveReporterOptions } from '../../src/reporters/options.js'

describe('resolveReporterOptions', () => {
  it('resolves paths against the config directory, ignoring the keys runners add', () => {
    const input = { db: 'data/fw.db', suite: 'e2e', quarantineFile: 'q.json', configDir: '/x' }
    expect(resolveReporterOptions(input, '/repo', {}).options).toEqual({
      target: { kind: 'store', db: '/repo/data/fw.db' },
      db: '/repo/data/fw.db',
      suite: 'e2e',
      quarantine: { file: '/repo/q.json' },
    })
  })

  it('leaves the default store where the CLI looks for it', () => {
    expect(resolveReporterOptions({}, '/repo', { FLAKEWATCH_DB: 'env.db' }).options).toMatchObject({ db: 'env.db' })
    const defaults = resolveReporterOptions(undefined, '/repo', {}).options
    expect(defaults).toMatchObject({ db: '.flakewatch.db', quarantine: null })
  })

  it('writes CTRF when asked, still reading quarantines from the store', () => {
    const pg = 'postgres://u:p@h/db'
    const ctrf = resolveReporterOptions({ db: pg, outputFile: 'out/ctrf.json', quarantine: true }, '/repo', {})
    expect(ctrf.options).toEqual({
      target: { kind: 'ctrf', file: '/repo/out/ctrf.json' },
      db: pg,
      suite: undefined,
      quarantine: { file: null },
    })
    const off = resolveReporterOptions({ quarantineFile: 'q.json', quarantine: false }, '/repo', {})
    expect(off.options?.quarantine).toBeNull()
  })

  it('reports wrong option types instead of throwing', () => {
    expect(resolveReporterOptions({ db: 42, quarantine: 'yes' }, '/repo', {})).toEqual({
      options: null,
      errors: [
        'db: Invalid input: expected string, received number',
        'quarantine: Invalid input: expected boolean, received string',
      ],
    })
  })
})
