import type { TextIndex } from './store-context.js'

const nothing = async (): Promise<void> => {}

/** The index of a store composed without the search module: writers call it, it keeps nothing. */
export const NO_TEXT_INDEX: TextIndex = { tables: [], put: nothing, remove: nothing }
