import { MemoryError } from '@engram/core'
import type * as Y from 'yjs'
import { LOCAL_ORIGIN } from './mirror-doc.js'
import type { ValueCipher } from './value-cipher.js'

/** Where an encrypted project document keeps its key checks (a `Y.Map` beside the kinds). */
const META = 'meta'
/** The single key check written by earlier versions: when present, it is the project's check. */
const LEGACY_CHECK = 'keyCheck'
/** One key check per device that set the project up: `keyCheck/<deviceId>`. */
const CHECK_PREFIX = 'keyCheck/'

/** A device's key check: a known text sealed with its key, and when it was written. */
interface CheckEntry {
  device: string
  at: number
  sealed: Uint8Array
}

/** What {@link checkKey} found. */
export type KeyCheckResult =
  /** This device may publish: its key opens the check, or neither side encrypts. */
  | { state: 'ok' }
  /** Encrypting, and the document has no check yet (a new project, or not synced yet). */
  | { state: 'absent' }
  /** This device must not publish or apply anything: wrong key, or plain vs encrypted. */
  | { state: 'refused'; error: MemoryError }

const checkContext = (projectId: string): string => `engram-key-check\u0000${projectId}`
const CHECK_TEXT = new TextEncoder().encode('engram-sync key check v1')

function entryOf(value: unknown): CheckEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { device, at, sealed } = value as Partial<CheckEntry>
  return typeof device === 'string' && typeof at === 'number' && Number.isFinite(at) && sealed instanceof Uint8Array ? { device, at, sealed } : undefined
}

/**
 * The check that decides a project's key. Two devices that set up the same
 * project at once each write a check of their own (`keyCheck/<deviceId>`); the
 * earliest (by its time, then by device id) decides on every device, whatever
 * order the checks arrive in. A check written by an earlier version decides
 * when present.
 */
export function decidingCheck(doc: Y.Doc): { sealed: Uint8Array; device?: string; at?: number } | undefined {
  const meta = doc.getMap<unknown>(META)
  const legacy = meta.get(LEGACY_CHECK)
  if (legacy instanceof Uint8Array) return { sealed: legacy }
  let best: CheckEntry | undefined
  for (const [key, value] of meta) {
    if (!key.startsWith(CHECK_PREFIX)) continue
    const entry = entryOf(value)
    if (entry && (best === undefined || entry.at < best.at || (entry.at === best.at && entry.device < best.device))) best = entry
  }
  return best
}

/**
 * Whether the document holds a key check this device's key does not open: devices set the
 * project up with different keys at the same time (the one that lost the check refuses to sync).
 */
export async function otherKeyCheckExists(doc: Y.Doc, projectId: string, cipher: ValueCipher): Promise<boolean> {
  const meta = doc.getMap<unknown>(META)
  for (const [key, value] of meta) {
    const sealed = key === LEGACY_CHECK ? value : key.startsWith(CHECK_PREFIX) ? entryOf(value)?.sealed : undefined
    if (!(sealed instanceof Uint8Array)) continue
    try {
      await cipher.open(sealed, checkContext(projectId))
    } catch {
      return true
    }
  }
  return false
}

const whoFirst = (check: { device?: string; at?: number }): string =>
  check.device === undefined ? '' : ` (set up by device ${check.device} on ${new Date(check.at ?? 0).toISOString()})`

/**
 * Compares this device's encryption with the project document's deciding key
 * check. It lets a device with the wrong key (or none) find out before it
 * writes anything into the document, so it never overwrites other devices'
 * values with ones they cannot read.
 */
export async function checkKey(doc: Y.Doc, projectId: string, cipher: ValueCipher | undefined): Promise<KeyCheckResult> {
  const check = decidingCheck(doc)
  if (check === undefined) return cipher ? { state: 'absent' } : { state: 'ok' }
  if (!cipher) {
    return {
      state: 'refused',
      error: new MemoryError(
        'crypto',
        `Project ${projectId} is end-to-end encrypted${whoFirst(check)}. To sync it on this device, pass startSync({ encryption }) with the same passphrase or key as your other devices and start sync again. Until then nothing is synced from or to this device; its memory stays here.`,
      ),
    }
  }
  try {
    await cipher.open(check.sealed, checkContext(projectId))
    return { state: 'ok' }
  } catch (cause) {
    return {
      state: 'refused',
      error: new MemoryError(
        'crypto',
        `Project ${projectId} is end-to-end encrypted with another key${whoFirst(check)}: the passphrase or key of this device does not open it. Give this device the same passphrase or key as your other devices and start sync again. Until then nothing is synced from or to this device; its memory stays here.`,
        { cause },
      ),
    }
  }
}

/** Writes this device's key check into the document, unless one is there already. */
export async function writeKeyCheck(doc: Y.Doc, projectId: string, cipher: ValueCipher, deviceId: string, now: number = Date.now()): Promise<void> {
  const sealed = await cipher.seal(CHECK_TEXT, checkContext(projectId))
  if (decidingCheck(doc) !== undefined) return
  const entry: CheckEntry = { device: deviceId, at: now, sealed }
  doc.transact(() => doc.getMap<unknown>(META).set(`${CHECK_PREFIX}${deviceId}`, entry), LOCAL_ORIGIN)
}

/** Calls `listener` when another device adds or changes a key check. @returns the unsubscribe function. */
export function onKeyCheckChange(doc: Y.Doc, listener: () => void): () => void {
  const meta = doc.getMap<unknown>(META)
  const handler = (event: Y.YMapEvent<unknown>, tr: Y.Transaction): void => {
    if (tr.origin === LOCAL_ORIGIN) return
    for (const key of event.keysChanged) {
      if (key === LEGACY_CHECK || key.startsWith(CHECK_PREFIX)) return listener()
    }
  }
  meta.observe(handler)
  return () => meta.unobserve(handler)
}
