import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ownersOf, parseCodeowners } from '../../src/owners/codeowners.js'
import { detectDialect, ownerLookup, readCodeowners } from '../../src/owners/read-codeowners.js'
import { ROOT, testdir } from '../helpers/run-cli.js'
import { cleanup } from '../reporters/helpers.js'

const FIXTURES = join(ROOT, 'test', 'fixtures', 'codeowners')
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8')

describe('GitHub CODEOWNERS (aiohttp)', () => {
  const co = parseCodeowners(fixture('aiohttp.CODEOWNERS'), 'github')
  it('the last matching line wins', () => {
    expect(ownersOf(co, 'aiohttp/web.py')).toEqual(['@asvetlov'])
    expect(ownersOf(co, 'tests/test_web.py')).toEqual(['@asvetlov'])
    expect(ownersOf(co, 'docs/index.rst')).toEqual(['@webknjaz', '@asvetlov'])
    expect(ownersOf(co, '.gitignore')).toEqual(['@webknjaz'])
    expect(ownersOf(co, 'tools/gen.py')).toEqual(['@webknjaz', '@asvetlov'])
  })
  it('`/tests/*` owns files right in tests/, not deeper', () => {
    // Deeper files fall back to `*`, which is @asvetlov alone; a .yml deeper down is owned by `*.yml`.
    expect(ownersOf(co, 'tools/sub/gen.py')).toEqual(['@asvetlov'])
    expect(ownersOf(co, 'tests/data/x.yml')).toEqual(['@webknjaz', '@asvetlov'])
  })
  it('a slash inside a pattern anchors it at the root (gitignore), unlike GitLab', () => {
    const gh = parseCodeowners('* @all\ndocs/api @api', 'github')
    const gl = parseCodeowners('* @all\ndocs/api @api', 'gitlab')
    expect(ownersOf(gh, 'docs/api/x.md')).toEqual(['@api'])
    expect(ownersOf(gh, 'sub/docs/api/x.md')).toEqual(['@all'])
    expect(ownersOf(gl, 'sub/docs/api/x.md')).toEqual(['@api'])
  })
  it('ignores negation, comments and escapes as GitHub does, and a line without owners unowns', () => {
    const co2 = parseCodeowners('* @all # everyone\n!*.md @none\n/vendor/\n\\#notes @x', 'github')
    expect(co2.warnings).toEqual([expect.stringMatching(/:2: GitHub does not support negation/)])
    expect(ownersOf(co2, 'README.md')).toEqual(['@all'])
    expect(ownersOf(co2, 'vendor/lib.js')).toEqual([])
    expect(ownersOf(co2, '#notes')).toEqual(['@all'])
  })
})

describe('GitLab CODEOWNERS', () => {
  const gitlab = parseCodeowners(fixture('gitlab.CODEOWNERS'), 'gitlab')
  it('joins the owners of every section; each section takes its last match and its default owners', () => {
    const owners = ownersOf(gitlab, 'app/assets/javascripts/app.js')
    expect(owners).toContain('@gitlab-org/maintainers/frontend')
    expect(owners).toContain('@gl-quality/qe-maintainers') // the unnamed section's `*`
    expect(ownersOf(gitlab, 'scripts/frontend/build.js')).toEqual(
      expect.arrayContaining(['@gl-quality/eng-prod', '@gitlab-org/maintainers/frontend']),
    )
  })
  it('an entry without owners and no section default leaves the path unowned in that section', () => {
    // `/doc/**/*.md` has no owners: the `*` rule no longer applies, and no other section matches.
    expect(ownersOf(gitlab, 'doc/user/index.md')).toEqual([])
    expect(ownersOf(gitlab, 'qa/specs/login_spec.rb')).toEqual(
      expect.arrayContaining(['@gl-quality', '@gitlab-org/maintainers/rails-backend']),
    )
  })
  it('`/db/*` owns db/ root files only', () => {
    const everyone = ownersOf(gitlab, 'README') // the unnamed section's `*` alone
    expect(everyone).toHaveLength(9)
    expect(ownersOf(gitlab, 'db/structure.sql')).toEqual(everyone) // `*` already names the database maintainers
    expect(ownersOf(gitlab, 'db/click_house/x.sql')).toEqual([...everyone, '@gitlab-org/maintainers/clickhouse'])
    expect(ownersOf(gitlab, 'ee/db/geo/x.sql')).toEqual(everyone)
  })
  it('reads optional sections (KiCad)', () => {
    const kicad = parseCodeowners(fixture('kicad.CODEOWNERS'), 'gitlab')
    expect(kicad.sections.map((s) => [s.name, s.optional])).toEqual([
      [null, false],
      ['Suggested Reviewers', true],
    ])
    expect(ownersOf(kicad, 'pcbnew/router/pns_router.cpp')).toEqual(['@twlostow', '@craftyjon', '@sethhillbrand'])
    expect(ownersOf(kicad, 'eeschema/connection_graph.cpp')).toEqual(['@craftyjon', '@sethhillbrand'])
    expect(ownersOf(kicad, 'pcbnew/pcb_io/easyedapro_parser.cpp')).toEqual(['@dsa-t'])
    expect(ownersOf(kicad, 'qa/tests/x.cpp')).toEqual([])
  })
  it('exclusions, escaped spaces, merged sections and approval counts', () => {
    const co = parseCodeowners(
      [
        '* @default',
        '!pom.xml',
        '[Docs][2] @docs',
        'docs/',
        'my\\ folder/ @spacey',
        '[Ruby]',
        '*.rb @ruby',
        '!/config/*',
        '[docs]',
        'guides/ @guides',
      ].join('\n'),
      'gitlab',
    )
    expect(ownersOf(co, 'pom.xml')).toEqual([])
    expect(ownersOf(co, 'config/app.rb')).toEqual(['@default'])
    expect(ownersOf(co, 'lib/app.rb')).toEqual(['@default', '@ruby'])
    expect(ownersOf(co, 'docs/a.md')).toEqual(['@default', '@docs'])
    expect(ownersOf(co, 'my folder/a.md')).toEqual(['@default', '@spacey'])
    expect(ownersOf(co, 'guides/a.md')).toEqual(['@default', '@guides'])
    expect(co.sections.map((s) => s.name)).toEqual([null, 'Docs', 'Ruby'])
  })
})

describe('finding the file and the test path', () => {
  it('detects the dialect from the folder or the syntax', () => {
    expect(detectDialect('/r/.gitlab/CODEOWNERS', '* @a')).toBe('gitlab')
    expect(detectDialect('/r/.github/CODEOWNERS', '[x]')).toBe('github')
    expect(detectDialect('/r/CODEOWNERS', '* @a\n[Docs]\n')).toBe('gitlab')
    expect(detectDialect('/r/CODEOWNERS', '* @a\n')).toBe('github')
  })
  it('finds .github/CODEOWNERS and looks tests up by their repository-relative file', () => {
    const dir = testdir({ '.github/CODEOWNERS': fixture('aiohttp.CODEOWNERS'), 'tests/x.py': '' }, 'owners-')
    try {
      const lookup = ownerLookup(readCodeowners({ root: dir }))
      expect(lookup({ file: 'tests/test_client.py', module: 'x' })).toEqual(['@asvetlov'])
      expect(lookup({ file: null, module: 'CHANGES/1.feature.md' })).toEqual(['@webknjaz', '@asvetlov'])
      expect(lookup({ file: null, module: 'shop.checkout.PaymentTest' })).toEqual([])
      expect(readCodeowners({ root: join(dir, 'tests') })).toBeNull()
      expect(() => readCodeowners({ root: dir, file: 'nope' })).toThrow(/nope: CODEOWNERS file not found/)
    } finally {
      cleanup(dir)
    }
  })
})
