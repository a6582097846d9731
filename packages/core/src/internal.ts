/*
 * The seams between Engram's own packages (@engram/sync, @engram/worker, @engram/react):
 * not for apps, and not covered by the public contract of docs/api.md. Import them from
 * `@engram/core/internal`.
 */
export { replicationOf } from './replication/replication-seam.js'
export { atRestCipherOf, verifyAtRestKey, type AtRestCipher } from './encryption/at-rest-seam.js'
export { mapError } from './store/map-error.js'
export { eraseDatabases } from './encryption/erase-database.js'
export type { OutboxRow } from './store/rows.js'
export { IDENTITY_FIELDS } from './catalog/lists.js'
export { MIN_OFFSET_CHANGE_MS } from './replication/clock-correction.js'
