import { describe, expect, it } from 'vitest'
import { parseReport, sourceFromBuffer } from '../../src/ingest/index.js'

describe('what flakewatch’s own reporters and fixture add to foreign formats', () => {
  it('Playwright JSON: the healing annotation marks the result healing_occurred', async () => {
    const report = {
      config: {},
      suites: [
        {
          title: 'a.spec.ts',
          file: 'a.spec.ts',
          specs: [
            {
              title: 'healed',
              file: 'a.spec.ts',
              tests: [
                {
                  projectName: 'chromium',
                  status: 'expected',
                  results: [
                    {
                      retry: 0,
                      status: 'passed',
                      annotations: [{ type: 'flakewatch-healed', description: '#old → #new' }],
                    },
                  ],
                },
              ],
            },
            {
              title: 'plain',
              file: 'a.spec.ts',
              tests: [
                {
                  projectName: 'chromium',
                  status: 'expected',
                  annotations: [{ type: 'slow' }],
                  results: [{ retry: 0, status: 'passed' }],
                },
              ],
            },
          ],
        },
      ],
    }
    const parsed = await parseReport(sourceFromBuffer('pw.json', JSON.stringify(report)))
    expect(parsed.cases.map((c) => [c.name, c.healingOccurred])).toEqual([
      ['healed', true],
      ['plain', false],
    ])
  })

  it('CTRF: extra.env becomes facets, extra.healingOccurred and errorType are kept, unknown extra is ignored', async () => {
    const report = {
      results: {
        tool: { name: 'playwright' },
        tests: [
          {
            name: 't1',
            status: 'failed',
            extra: { env: { project: 'firefox' }, healingOccurred: true, errorType: 'timeout' },
          },
          { name: 't2', status: 'passed', extra: { whatever: [1, 2], env: 'not a map' } },
        ],
      },
    }
    const parsed = await parseReport(sourceFromBuffer('ctrf.json', JSON.stringify(report)))
    expect(parsed.cases[0]).toMatchObject({ env: { project: 'firefox' }, healingOccurred: true, errorType: 'timeout' })
    expect(parsed.cases[1]!.env).toBeUndefined()
    expect(parsed.cases[1]!.healingOccurred).toBe(false)
  })
})
