import { describe, expect, it } from 'vitest'
import { axisLabels } from '../../src/web/heat-axis.js'

const runs = (...at: string[]) => at.map((a) => ({ at: a }))

describe('the heatmap axis', () => {
  it('names a day once and the later runs of that day by their time', () => {
    const labels = axisLabels(
      runs(
        '2026-11-26T22:00:00.000Z',
        '2026-11-27T09:00:00.000Z',
        '2026-11-27T11:15:00.000Z',
        '2026-11-27T15:30:00.000Z',
      ),
      1,
    )
    expect([...labels.values()]).toEqual(['11-26', '11-27', '11:15', '15:30'])
  })

  it('numbers runs of one day that share a minute too', () => {
    const labels = axisLabels(runs('2026-11-27T11:00:00Z', '2026-11-27T11:00:10Z', '2026-11-27T11:00:20Z'), 1)
    expect([...labels.values()]).toEqual(['11-27', '11:00', '#3'])
  })

  it('labels every n-th column counted from the newest, each label distinct from the one before', () => {
    const at = Array.from({ length: 10 }, (_, i) => `2026-11-27T${String(8 + i).padStart(2, '0')}:00:00Z`)
    const labels = axisLabels(runs(...at), 3)
    expect([...labels.keys()]).toEqual([0, 3, 6, 9])
    expect([...labels.values()]).toEqual(['11-27', '11:00', '14:00', '17:00'])
    const texts = [...labels.values()]
    for (let i = 1; i < texts.length; i++) expect(texts[i]).not.toBe(texts[i - 1])
  })

  it('keeps one label a day when each day has one run', () => {
    const labels = axisLabels(runs('2026-11-25T12:00:00Z', '2026-11-26T12:00:00Z', '2026-11-27T12:00:00Z'), 1)
    expect([...labels.values()]).toEqual(['11-25', '11-26', '11-27'])
  })
})
