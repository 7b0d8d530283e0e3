/** Types of cases.mjs, for the TypeScript tests. */
export interface HealCase {
  id: string
  category: string
  note: string
  before: string
  after: string
  locator: Array<[string, ...unknown[]]>
  /** A CSS selector of the right element in `after`, or `refuse`. */
  expect: string
}
export declare const CASES: HealCase[]
