import { compareHlc } from '../store/hlc.js'
import { restorable } from '../store/stamp-restore.js'
import type { EngramDb } from '../catalog/schema.js'
import { MIRRORED_KINDS } from '../catalog/lists.js'

/**
 * The highest well-formed stamp stored in the mirrored tables and the outbox,
 * so a reopened store's clock starts after every stamp it issued or accepted
 * (a clock started from the wall clock alone would stamp a restarted device's
 * edit below a remote stamp it already holds, and the edit would lose). Message
 * rows stored without their own `hlc` (appends: message-order.ts `messageStamp`)
 * are not in the `hlc` index; their session's `lastAt` stands for them.
 * Malformed stamps and stamps more than {@link RESTORE_MAX_LEAD_MS} ahead of `now` are skipped.
 * @returns undefined when nothing is stored.
 */
export async function highestStoredStamp(db: EngramDb, now: number): Promise<string | undefined> {
  let highest: string | undefined
  const see = (stamp: unknown): void => {
    if (restorable(stamp, now) && compareHlc(stamp, highest) > 0) highest = stamp
  }
  const tables = [...MIRRORED_KINDS, 'outbox']
  await db.transaction('r', [...tables, 'sessions', 'messages'], async () => {
    await Promise.all([
      ...tables.map((t) => db.table(t).each((row: { hlc?: unknown }) => see(row.hlc))),
      db.sessions.each((row) => {
        see(row.hlc)
        see(row.lastAt)
      }),
    ])
    // Messages may be many: walk their stamps from the highest down to the first one restored.
    await db.messages
      .orderBy('hlc')
      .reverse()
      .until((row) => restorable(row.hlc, now), true)
      .each((row) => see(row.hlc))
  })
  return highest
}
