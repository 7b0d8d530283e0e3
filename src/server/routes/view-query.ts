import { z } from 'zod'
import { SORT_KEYS } from '../api-types.js'
import { selectionShape } from '../selection.js'
import { defaultOrder, type TestView } from '../views.js'

/** Query parameters of the endpoints that list analysed tests: the selection, plus search, verdict and sort. */
export const viewShape = {
  ...selectionShape,
  search: z.string().trim().max(500).optional(),
  verdict: z.enum(['healthy', 'flaky', 'broken', 'insufficient_data']).optional(),
  sort: z.enum(SORT_KEYS).default('flaky'),
  order: z.enum(['asc', 'desc']).optional(),
  /** Only tests this code owner owns. */
  owner: z.string().trim().max(500).optional(),
  offset: z.coerce.number().int().min(0).default(0),
}

type ViewQuery = { search?: string; verdict?: TestView['verdict']; sort: TestView['sort']; order?: 'asc' | 'desc' }

export function toView(q: ViewQuery): TestView {
  return { search: q.search || undefined, verdict: q.verdict, sort: q.sort, order: q.order ?? defaultOrder(q.sort) }
}
