import { relative } from 'node:path'
import { createVitest } from 'vitest/node'
import { expect, it } from 'vitest'
import { ROOT } from '../helpers/run-cli.js'
import { LONGEST_FIRST, LongestFirst } from '../sequencer.js'

it("the suite's config starts the longest files first, each of which still exists, then the rest", async () => {
  const vitest = await createVitest('test', { watch: false, root: ROOT, config: 'vitest.config.ts' })
  try {
    // The config's own sequencer (loaded through Vite, so another instance of the class than the one imported here).
    const Sequencer = vitest.config.sequence.sequencer
    expect(Sequencer.name).toBe(LongestFirst.name)
    const specs = await vitest.globTestSpecifications()
    const names = (await new Sequencer(vitest).sort(specs)).map((s) => relative(ROOT, s.moduleId))
    expect(names.slice(0, LONGEST_FIRST.length)).toEqual(LONGEST_FIRST)
    expect(new Set(names).size).toBe(specs.length)
    expect(names).toContain('test/config/sequencer.test.ts')
  } finally {
    await vitest.close()
  }
})
