import { describe, expect, it } from 'vitest'
import {
  bareName,
  isPathSuffix,
  MAX_REMEMBERED_NEW_TESTS,
  refOf,
  SuiteIdentities,
  titleKey,
} from '../../src/ingest/test-identity.js'

const known = (module: string, name: string, file: string | null = module) => refOf('unit', module, name, file)
/** A name from jest-junit's default output: the first describe block's title as module, no file. */
const label = (module: string, name: string) => ({ ...refOf('unit', module, name, null), moduleIsLabel: true })

describe('test identity across reporters', () => {
  it('compares titles with every separator made the same', () => {
    expect(titleKey('Auth › login › accepts a > b')).toBe('Auth login accepts a b')
    expect(titleKey('Auth > login > accepts a > b')).toBe('Auth login accepts a b')
    expect(titleKey(' Auth login accepts a > b')).toBe('Auth login accepts a b')
    expect(bareName('chromium › auth.spec.ts › Auth › x', 'chromium', 'src/auth.spec.ts')).toBe('Auth › x')
    expect(bareName('[firefox] > src/auth.spec.ts > x', 'firefox', 'src/auth.spec.ts')).toBe('x')
    // A title that only starts like the project keeps its name.
    expect(bareName('chromiumish › x', 'chromium', null)).toBe('chromiumish › x')
    expect(isPathSuffix('src/a.ts', 'packages/cart/src/a.ts')).toBe(true)
    expect(isPathSuffix('a.ts', 'packages/cart/ba.ts')).toBe(false)
  })

  it("gives jest-junit's default names (no file, titles joined by spaces) the known test's id", () => {
    const ids = new SuiteIdentities([
      known('src/auth.test.js', 'Auth › expires the session'),
      known('src/a.test.js', 'top'),
    ])
    ids.beginReport()
    const r = ids.resolve(label('Auth', 'Auth expires the session'))
    expect(r).toMatchObject({ kind: 'alias', ref: { testId: 'unit::src/auth.test.js::Auth › expires the session' } })
    expect(ids.resolve(label('Auth', 'top')).ref.testId).toBe('unit::src/a.test.js::top')
    // The same name again is the alias, a lookup.
    expect(ids.resolve(label('Auth', 'top')).ref.testId).toBe('unit::src/a.test.js::top')
  })

  it('makes a path from an unknown checkout relative by the longest known suffix', () => {
    const ids = new SuiteIdentities([known('src/auth.test.js', 'Auth › a')])
    ids.beginReport()
    expect(ids.resolve(known('/tmp/x/src/auth.test.js', 'Auth › a')).ref.testId).toBe(
      'unit::src/auth.test.js::Auth › a',
    )
    // A test the store does not know yet, in a file it knows: named with the known path.
    const added = ids.resolve(known('/tmp/x/src/auth.test.js', 'Auth › b'))
    expect(added.ref).toEqual(known('src/auth.test.js', 'Auth › b'))
    // Two absolute paths of different checkouts are not taken for one file.
    const other = new SuiteIdentities([known('/a/one/x.test.js', 'x')])
    other.beginReport()
    expect(other.resolve(known('/b/two/x.test.js', 'x')).kind).toBe('new')
  })

  it('matches package-relative and repository-relative paths of a monorepo, and Vitest’s > to ›', () => {
    const ids = new SuiteIdentities([known('packages/cart/src/a.test.ts', 'cart › adds')])
    ids.beginReport()
    expect(ids.resolve(known('src/a.test.ts', 'cart > adds')).ref.testId).toBe(
      'unit::packages/cart/src/a.test.ts::cart › adds',
    )
  })

  it('keeps apart what could be several tests, and never gives two names of one report one id', () => {
    const ids = new SuiteIdentities([
      known('packages/a/src/x.test.ts', 'adds'),
      known('packages/b/src/x.test.ts', 'adds'),
    ])
    ids.beginReport()
    const r = ids.resolve(known('src/x.test.ts', 'adds'))
    expect(r.kind).toBe('ambiguous')
    expect(r.ref.testId).toBe('unit::src/x.test.ts::adds')
    // The exact file settles it.
    expect(ids.resolve(known('packages/a/src/x.test.ts', 'adds')).kind).toBe('known')

    // jest-junit's default output: two `top` tests of different files, one known so far.
    const jj = new SuiteIdentities([known('src/a.test.js', 'top')])
    jj.beginReport()
    expect(jj.resolve(label('A', 'top')).ref.testId).toBe('unit::src/a.test.js::top')
    const second = jj.resolve(label('B', 'top'))
    expect(second.kind).toBe('new')
    expect(second.ref.testId).toBe('unit::B::top')
    // In the next report, the file B's test comes from is the one fileless `top` left: B's.
    jj.beginReport()
    expect(jj.resolve(known('src/b.test.js', 'top')).ref.testId).toBe('unit::B::top')
    // A different file never matches, nor a different title.
    expect(jj.resolve(known('src/c.test.js', 'top two')).kind).toBe('new')
    const files = new SuiteIdentities([known('src/a.test.js', 'top')])
    files.beginReport()
    expect(files.resolve(known('src/b.test.js', 'top')).kind).toBe('new')
  })

  it('takes the name a known id already has over a looser match', () => {
    const ids = new SuiteIdentities([known('src/a.test.js', 'a b'), known('src/a.test.js', 'a › b')])
    ids.beginReport()
    expect(ids.resolve(known('src/a.test.js', 'a › b'))).toMatchObject({ kind: 'known' })
    expect(ids.resolve(known('src/a.test.js', 'a > b')).kind).toBe('ambiguous')
  })

  it('tells classes apart: a module that is not a label is part of the identity', () => {
    const ids = new SuiteIdentities([known('com.shop.CartTest', 'adds', null)])
    ids.beginReport()
    expect(ids.resolve(known('com.shop.OrderTest', 'adds', null)).kind).toBe('new')
    expect(ids.resolve(known('src/cart.test.js', 'adds')).kind).toBe('new')
    // A stored name whose title starts with its module reads as jest-junit's (`Auth`, `Auth expires`).
    const stored = new SuiteIdentities([known('Auth', 'Auth expires', null)])
    stored.beginReport()
    expect(stored.resolve(known('src/auth.test.js', 'Auth › expires')).ref.testId).toBe('unit::Auth::Auth expires')
  })

  it('remembers a bounded number of new tests per command, so that a huge first report stays in bounded memory', () => {
    const ids = new SuiteIdentities()
    ids.beginReport()
    const n = MAX_REMEMBERED_NEW_TESTS + 5
    for (let i = 0; i < n; i++) expect(ids.resolve(known('src/big.test.js', `Big › t${i}`)).kind).toBe('new')
    expect(ids.size).toBe(MAX_REMEMBERED_NEW_TESTS)
    // A later report of the same command: a remembered test is matched across separators, one past the bound is
    // left for the next command (which reads it from the store).
    ids.beginReport()
    expect(ids.resolve(known('src/big.test.js', 'Big > t0')).ref.testId).toBe('unit::src/big.test.js::Big › t0')
    expect(ids.resolve(known('src/big.test.js', `Big > t${n - 1}`)).ref.testId).toBe(
      `unit::src/big.test.js::Big > t${n - 1}`,
    )
  })
})
