import { type Collection, Dexie } from 'dexie'
import { formatHlc, isHlc } from '../store/hlc.js'
import { maxKey } from '../store/keys.js'
import type { EngramDb } from '../catalog/schema.js'
import type { MessageRow } from '../store/rows.js'

/**
 * The merged order of a session's messages. Every message carries `at`: the
 * hybrid-logical-clock stamp of its append (one stamp per message), fixed for
 * its life and the same on every device. Sorting a session's messages by `at`
 * orders them by clock, then by device id, so devices that appended to one
 * session while apart show the same sequence once they have met. `seq` stays
 * this device's gap-free arrival number: a message from another device gets
 * the next `seq` when it arrives, so `seq` order and merged order differ only
 * where devices wrote concurrently.
 *
 * Messages written before conversations synced (or imported from an older
 * dump) get a legacy key: their `createdAt` as a stamp of device `0`, then
 * their `seq` zero-padded, which keeps their old order.
 */

/** The device id of legacy order keys (no real device id is a single `0`: they are 16 characters). */
const LEGACY_DEVICE = '0'
const SEQ_DIGITS = 9
const LEGACY = /^(\d{13}\.\d{5}\.[0-9A-Za-z_-]{1,64}) \d{9}$/

/** The order key and stamp of a message stored without them (older versions, older dumps). */
export function legacyOrder(row: { createdAt: number; seq: number }): { at: string; hlc: string } {
  const physical = Math.max(0, Math.min(Math.trunc(Number(row.createdAt) || 0), 9_999_999_999_999))
  const hlc = formatHlc(physical, 0, LEGACY_DEVICE)
  return { hlc, at: `${hlc} ${String(Math.max(0, Math.trunc(row.seq) || 0)).padStart(SEQ_DIGITS, '0')}` }
}

/** True for a message order key: a stamp, or a legacy key (stamp, space, nine digits). */
export function isOrderKey(at: unknown): at is string {
  return typeof at === 'string' && (isHlc(at) || LEGACY.test(at))
}

/** The stamp inside an order key. */
export function stampOfOrder(at: string): string {
  const space = at.indexOf(' ')
  return space === -1 ? at : at.slice(0, space)
}

/**
 * The stamp of a stored message row: its own `hlc`, or, for a row stored without
 * one (an append, whose stamp is its order key's), the stamp of its order key.
 * Appends leave `hlc` out so the `hlc` index holds only rows whose stamp differs
 * from their key's (edits, deletions, later remote records, older rows): every
 * appended row indexed twice by the same stamp made bulk appends slower.
 * Every stored row has `at` (legacy-fill.ts fills it).
 */
export function messageStamp(row: Pick<MessageRow, 'at' | 'hlc'>): string {
  return row.hlc ?? stampOfOrder(row.at!)
}

/** The messages of these sessions, session by session in merged order (there is no index by project). */
export function messagesOf(db: EngramDb, sessionIds: readonly string[]): Collection<MessageRow, string> {
  if (sessionIds.length === 0) return db.messages.where(':id').anyOf([])
  return db.messages.where('[sessionId+at]').inAnyRange(
    sessionIds.map((id) => [
      [id, Dexie.minKey],
      [id, maxKey()],
    ]),
  )
}
