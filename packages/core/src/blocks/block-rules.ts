/*
 * What every block follows wherever it is written (the namespace, sync, import):
 * its id and its limits. Apart from blocks.ts so that sync and import need not
 * load the namespace.
 */

/** Characters a block holds when no limit is given. */
export const DEFAULT_BLOCK_LIMIT = 2000
/** Largest limit a block may have (characters). */
export const MAX_BLOCK_LIMIT = 1_000_000
/** Longest block description (characters). */
export const MAX_BLOCK_DESCRIPTION = 2000

/** The stable id of a block in changes and sync: `<projectId>/<label>`, both URI-encoded. */
export function blockId(projectId: string, label: string): string {
  return `${encodeURIComponent(projectId)}/${encodeURIComponent(label)}`
}
