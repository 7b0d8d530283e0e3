/** Types of held-out.mjs, for the TypeScript tests. */
import type { HealCase } from './cases.mjs'
export declare const HELD_OUT: HealCase[]
export declare const HELD_OUT_2: HealCase[]
