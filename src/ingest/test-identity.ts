import { makeTestId, type TestRef } from '../model.js'

/*
 * Reconciling the names one test gets from different reporters (issue 27, item 5). Reporters disagree, under
 * their default settings, on how a test is named:
 * - jest-junit's default templates drop the file and join the describe path with spaces
 *   (`Auth expires the session`, classname = name, the suite named after the first describe block);
 * - Jest's JSON, CTRF and the native reporters give absolute paths, which are relative to the repository only
 *   when ingest knows its root;
 * - Vitest joins titles with ` > `, Jest and Playwright with ` › `;
 * - in a monorepo, a reporter configured in the package writes package-relative paths, and one in the repository
 *   repository-relative paths.
 * Ids are never rewritten here (a user's history is keyed by them): a new name is matched to the test the store
 * already knows when the two can only be the same test, and the known id is used. Pure: the caller loads what the
 * store knows and stores what this decides.
 */

/** A separator a runner joins titles with: ` › ` (Jest, Playwright), ` > ` (Vitest, CTRF), or plain spaces. */
const TITLE_SEPARATORS = /\s*[›>]\s*|\s+/g

/**
 * A title with every way of joining its describe path made the same, so that `Auth › expires`, `Auth > expires`
 * and jest-junit's `Auth expires` compare equal.
 * @example titleKey('Auth › login > accepts') // 'Auth login accepts'
 */
export function titleKey(name: string): string {
  return name.replace(TITLE_SEPARATORS, ' ').trim()
}

/** Endings of test files: a module that ends so (or holds a `/`) is a path even where the report has no `file`. */
const TEST_FILE = /\.(?:[cm]?[jt]sx?|py|rb|go|php|feature|rs|kt|java|cs|ex|exs)$/i

/**
 * A path with `/` separators and without a leading `./`.
 * @example normalPath('.\\src\\a.test.ts') // 'src/a.test.ts'
 */
export function normalPath(path: string): string {
  return path.replace(/\\/g, '/').replace(/^(?:\.\/)+/, '')
}

/** The test's file: its `file`, else its module when that reads as a path (Vitest's JUnit classname). */
export function pathOf(ref: Pick<TestRef, 'module' | 'file'>): string | null {
  if (ref.file) return normalPath(ref.file)
  return ref.module.includes('/') || TEST_FILE.test(ref.module) ? normalPath(ref.module) : null
}

/**
 * Whether `short` names the same file as `long` seen from a folder further up: `long` ends with `/short`.
 * @example isPathSuffix('src/a.test.ts', '/home/ana/shop/src/a.test.ts') // true
 */
export function isPathSuffix(short: string, long: string): boolean {
  return long.length > short.length && long.endsWith(short) && long.charAt(long.length - short.length - 1) === '/'
}

/** Two paths that may name one file: equal, or one ends with the other at a folder boundary. */
function samePlace(a: string, b: string): boolean {
  return a === b || isPathSuffix(a, b) || isPathSuffix(b, a)
}

/**
 * Where a name puts its test: a path, a module that tells tests apart (a class, a package), or nothing (null) when
 * the module is only a label: jest-junit's default output, where it is the first describe block's title, or a
 * stored name whose title starts with its module, as that output's names do (`Auth` and `Auth expires…`).
 */
type Place = { path: string } | { module: string } | null

function placeOf(ref: TestRef): Place {
  const path = pathOf(ref)
  if (path !== null) return { path }
  if (ref.module === '' || ref.moduleIsLabel) return null
  const title = titleKey(ref.name)
  const module = titleKey(ref.module)
  return title === module || title.startsWith(`${module} `) ? null : { module: ref.module }
}

/** Whether two places may be one: either unknown, the same file seen from two folders, or the same module. */
function samePlaceOf(a: Place, b: Place): boolean {
  if (a === null || b === null) return true
  if ('path' in a) return 'path' in b && samePlace(a.path, b.path)
  return 'module' in b && a.module === b.module
}

/**
 * A name a reporter may put before the title: the Playwright project (`chromium › …`, `[chromium] › …`) or the
 * file (`auth.spec.ts › …`). It belongs to the run's facets or to the module, not to the test's name.
 */
function stripPrefix(name: string, prefix: string): string {
  for (const p of [prefix, `[${prefix}]`]) {
    if (!name.startsWith(p)) continue
    const rest = /^\s*[›>]\s*/.exec(name.slice(p.length))
    if (rest) return name.slice(p.length + rest[0].length)
  }
  return name
}

/**
 * The test's name without the prefixes some reporters put before it: the Playwright project and the file.
 * @example bareName('chromium › auth.spec.ts › Auth › expires', 'chromium', 'src/auth.spec.ts') // 'Auth › expires'
 */
export function bareName(name: string, project: string | undefined, path: string | null): string {
  let out = project ? stripPrefix(name, project) : name
  if (path) {
    out = stripPrefix(out, path)
    const base = path.slice(path.lastIndexOf('/') + 1)
    if (base) out = stripPrefix(out, base)
  }
  return out || name
}

/** Why a name was or was not matched to a known test, for the ingest's warnings. */
export type Reconciled =
  | { kind: 'known'; ref: TestRef }
  | { kind: 'alias'; ref: TestRef; from: TestRef }
  | { kind: 'new'; ref: TestRef }
  | { kind: 'ambiguous'; ref: TestRef; candidates: string[] }

/** A name recorded before, as the store keeps it (see `store/test-names.ts`). */
export interface KnownName {
  nameId: string
  testId: string
  moduleIsLabel: boolean
  source: 'ingest' | 'merge' | 'split'
}

/** A name to record: matched to `testId`, or (`nameId === testId`) a new test whose module is only a label. */
export interface NewName {
  nameId: string
  testId: string
  moduleIsLabel: boolean
}

/** Candidates listed in a warning about an ambiguous name. */
const MAX_LISTED = 3

/**
 * New tests remembered per command for matching the command's later reports. Each costs a few hundred bytes of
 * heap; past this count a report of a large new suite is still stored whole, and its names are matched from the
 * store by the next command instead (ingest's memory stays bounded: a first report of 10^6 tests is ordinary).
 */
export const MAX_REMEMBERED_NEW_TESTS = 20_000

/**
 * What the store knows of one suite's tests, and the names matched to them so far: the index a report's names are
 * reconciled against. Known ids are never changed; a name that can only be one known test gets that test's id.
 */
export class SuiteIdentities {
  private readonly byId = new Map<string, TestRef>()
  /** Recorded aliases: a name seen before and the id it was given. */
  private readonly aliases = new Map<string, string>()
  private readonly byTitle = new Map<string, TestRef[]>()
  /** Every known path, for making a path from an unknown checkout relative by the longest known suffix. */
  private readonly paths = new Set<string>()
  /** In the report being reconciled: known id → the name that took it. */
  private readonly claims = new Map<string, string>()

  /** Names a person split from the test they were matched to: never matched again. */
  private readonly apart = new Set<string>()
  /** Names matched or marked since the last {@link takeNewNames}, for the store to keep. */
  private pending: NewName[] = []
  /** New tests remembered so far (see {@link MAX_REMEMBERED_NEW_TESTS}). */
  private rememberedNew = 0

  /**
   * @param known the suite's tests as the store holds them
   * @param names the names recorded before (see `store/test-names.ts`): matches, splits, and the tests whose
   * module is only a label
   */
  constructor(known: Iterable<TestRef> = [], names: Iterable<KnownName> = []) {
    const labels = new Set<string>()
    for (const n of names) {
      if (n.source === 'split') this.apart.add(n.nameId)
      else if (n.nameId !== n.testId) this.aliases.set(n.nameId, n.testId)
      if (n.moduleIsLabel && n.nameId === n.testId) labels.add(n.testId)
    }
    for (const t of known) this.add(labels.has(t.testId) ? { ...t, moduleIsLabel: true } : t)
  }

  /** The names matched, and the label modules seen, since the last call: what the store should remember. */
  takeNewNames(): NewName[] {
    const out = this.pending
    this.pending = []
    return out
  }

  get size(): number {
    return this.byId.size
  }

  has(testId: string): boolean {
    return this.byId.has(testId) || this.aliases.has(testId)
  }

  /** Remembers a test the store holds (or will hold once the report is stored). */
  add(ref: TestRef): void {
    if (this.byId.has(ref.testId)) return
    this.byId.set(ref.testId, ref)
    const key = titleKey(ref.name)
    const list = this.byTitle.get(key)
    if (list) list.push(ref)
    else this.byTitle.set(key, [ref])
    const path = pathOf(ref)
    if (path) this.paths.add(path)
  }

  /** Remembers that the name `alias` is the test `testId`. */
  addAlias(alias: string, testId: string): void {
    this.aliases.set(alias, testId)
  }

  /**
   * The known path an absolute one names, by the longest known path it ends with: the file seen from the
   * repository instead of from this checkout. Null when none does.
   */
  private knownSuffix(path: string): string | null {
    let best: string | null = null
    // Folder by folder from the left: at most one lookup per `/` in the path.
    for (let i = path.indexOf('/'); i >= 0 && i < path.length - 1; i = path.indexOf('/', i + 1)) {
      const tail = path.slice(i + 1)
      if (this.paths.has(tail)) {
        best = tail
        break
      }
    }
    return best
  }

  /**
   * The id a test reported as `ref` is stored under, in a run of Playwright project `project` (if any):
   * - its own id when the store knows it, or a name already matched to a known test;
   * - else the one known test of the suite with the same title (separators aside) and the same file when both
   *   name one (the file compared up to the folder it is seen from): `alias`;
   * - else its own id (`new`), or when several known tests fit, its own id and the candidates (`ambiguous`),
   *   for a human to merge (`flakewatch tests merge`).
   */
  resolve(ref: TestRef, project?: string): Reconciled {
    const own = this.byId.get(ref.testId)
    if (own) {
      if (!this.claims.has(own.testId)) this.claims.set(own.testId, own.testId)
      return { kind: 'known', ref: own }
    }
    if (this.apart.has(ref.testId)) return this.fresh({ kind: 'new', ref })
    const aliased = this.aliases.get(ref.testId)
    const target = aliased === undefined ? undefined : this.byId.get(aliased)
    if (target) return this.claim({ kind: 'alias', ref: target, from: ref })
    const reported = pathOf(ref)
    const path = reported !== null && isAbsolutePath(reported) ? (this.knownSuffix(reported) ?? reported) : reported
    const key = titleKey(bareName(ref.name, project, path))
    const place = path === null ? placeOf(ref) : { path }
    const candidates = (this.byTitle.get(key) ?? []).filter((t) => samePlaceOf(place, placeOf(t)))
    if (candidates.length === 1) return this.claim({ kind: 'alias', ref: candidates[0]!, from: ref })
    const fresh = path === reported ? ref : withPath(ref, reported!, path!)
    if (fresh !== ref && candidates.length === 0) {
      // A new test of a known file, named from another checkout: named as the store names that file.
      if (!this.rememberNew(fresh)) return { kind: 'new', ref: fresh }
      return this.claim({ kind: 'alias', ref: fresh, from: ref })
    }
    if (candidates.length > 1) {
      // The same file exactly settles it among files seen from different folders.
      const exact = path === null ? [] : candidates.filter((t) => pathOf(t) === path)
      if (exact.length === 1) return this.claim({ kind: 'alias', ref: exact[0]!, from: ref })
      return this.fresh({
        kind: 'ambiguous',
        ref: fresh,
        candidates: candidates.slice(0, MAX_LISTED).map((t) => t.testId),
      })
    }
    return this.fresh({ kind: 'new', ref: fresh })
  }

  /**
   * Starts a new report: a known test takes at most one of its names per report, since two names in one report
   * are two tests (two `top` tests of different files in jest-junit's default output), never one.
   */
  beginReport(): void {
    this.claims.clear()
    this.pending = []
  }

  private claim(found: Extract<Reconciled, { kind: 'alias' }>): Reconciled {
    const by = this.claims.get(found.ref.testId)
    // Taken by another name of this report: two tests whose names differ only in their separators.
    if (by !== undefined && by !== found.from.testId) return this.fresh({ kind: 'new', ref: found.from })
    this.claims.set(found.ref.testId, found.from.testId)
    if (this.aliases.get(found.from.testId) !== found.ref.testId) {
      this.aliases.set(found.from.testId, found.ref.testId)
      this.pending.push({
        nameId: found.from.testId,
        testId: found.ref.testId,
        moduleIsLabel: !!found.from.moduleIsLabel,
      })
    }
    return found
  }

  /** Knows a test new to the store from now on, unless {@link MAX_REMEMBERED_NEW_TESTS} are known already. */
  private rememberNew(ref: TestRef): boolean {
    if (this.byId.has(ref.testId)) return true
    if (this.rememberedNew >= MAX_REMEMBERED_NEW_TESTS) return false
    this.rememberedNew++
    this.add(ref)
    return true
  }

  /** A name that stays a test of its own: known from now on, and taken in this report. */
  private fresh(found: Extract<Reconciled, { kind: 'new' | 'ambiguous' }>): Reconciled {
    const isNew = !this.byId.has(found.ref.testId)
    if (!this.rememberNew(found.ref)) return found
    this.claims.set(found.ref.testId, found.ref.testId)
    if (isNew && found.ref.moduleIsLabel) {
      this.pending.push({ nameId: found.ref.testId, testId: found.ref.testId, moduleIsLabel: true })
    }
    return found
  }
}

function isAbsolutePath(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:\//.test(path)
}

/** `ref` with the file it named from elsewhere (`from`) named as the store knows it (`to`). */
function withPath(ref: TestRef, from: string, to: string): TestRef {
  const module = normalPath(ref.module) === from ? to : ref.module
  return refOf(ref.suite, module, ref.name, ref.file === null ? null : to)
}

/**
 * A test ref whose id is rebuilt from its parts: the one rule for a reconciled name that keeps its own id.
 * @example refOf('unit', 'src/a.test.ts', 'adds', 'src/a.test.ts').testId // 'unit::src/a.test.ts::adds'
 */
export function refOf(suite: string, module: string, name: string, file: string | null): TestRef {
  return { testId: makeTestId(suite, module, name), suite, module, name, file }
}
