import { compareHlc, readHlc } from './hlc.js'
import type { EngramDb } from './schema.js'
import { MIRRORED_KINDS } from './mirrored-kinds.js'

/**
 * Stored stamps leading the wall clock by more than this are not restored: they
 * predate the drift bound (a device once set to 2099) and would freeze the clock.
 * Any drift bound sync is configured with up to this is honoured across restarts.
 */
export const RESTORE_MAX_LEAD_MS = 24 * 60 * 60_000

/**
 * The highest well-formed stamp stored in the mirrored tables and the outbox,
 * so a reopened store's clock starts after every stamp it issued or accepted
 * (a clock started from the wall clock alone would stamp a restarted device's
 * edit below a remote stamp it already holds, and the edit would lose).
 * Malformed stamps and stamps more than {@link RESTORE_MAX_LEAD_MS} ahead of `now` are skipped.
 * @returns undefined when nothing is stored.
 */
export async function highestStoredStamp(db: EngramDb, now: number): Promise<string | undefined> {
  let highest: string | undefined
  const see = (row: { hlc?: unknown }): void => {
    const parts = readHlc(row.hlc)
    if (!parts || parts.physical - now > RESTORE_MAX_LEAD_MS) return
    if (compareHlc(row.hlc as string, highest) > 0) highest = row.hlc as string
  }
  const tables = [...MIRRORED_KINDS, 'sessions', 'outbox']
  await db.transaction('r', [...tables, 'messages'], async () => {
    await Promise.all(tables.map((t) => db.table(t).each(see)))
    // Messages may be many: walk their stamps from the highest down to the first one restored.
    await db.messages
      .orderBy('hlc')
      .reverse()
      .until((row) => readHlc(row.hlc) !== undefined && readHlc(row.hlc)!.physical - now <= RESTORE_MAX_LEAD_MS, true)
      .each(see)
  })
  return highest
}
