import { MemoryError } from '@engram/core'
import type * as Y from 'yjs'
import { LOCAL_ORIGIN } from './mirror-doc.js'
import type { ValueCipher } from './value-cipher.js'

/** Where an encrypted project document keeps its key check (a `Y.Map` beside the kinds). */
const META = 'meta'
const KEY_CHECK = 'keyCheck'

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

/**
 * Compares this device's encryption with the project document's key check: a
 * known text sealed by the first encrypting device. It lets a device with the
 * wrong key (or none) find out before it writes anything into the document, so
 * it never overwrites other devices' values with ones they cannot read.
 */
export async function checkKey(doc: Y.Doc, projectId: string, cipher: ValueCipher | undefined): Promise<KeyCheckResult> {
  const check = doc.getMap<unknown>(META).get(KEY_CHECK)
  if (check === undefined) return cipher ? { state: 'absent' } : { state: 'ok' }
  if (!cipher) return { state: 'refused', error: new MemoryError('crypto', `Project ${projectId} is end-to-end encrypted by another device: pass startSync({ encryption }) with the same key or passphrase; nothing is synced until then`) }
  try {
    await cipher.open(check as Uint8Array, checkContext(projectId))
    return { state: 'ok' }
  } catch (cause) {
    return { state: 'refused', error: new MemoryError('crypto', `The encryption key of this device does not open project ${projectId} (wrong passphrase or key?); nothing is synced until it matches`, { cause }) }
  }
}

/** Writes this device's key check into the document (the first encrypting device of a project does). */
export async function writeKeyCheck(doc: Y.Doc, projectId: string, cipher: ValueCipher): Promise<void> {
  const sealed = await cipher.seal(CHECK_TEXT, checkContext(projectId))
  const meta = doc.getMap<unknown>(META)
  if (meta.get(KEY_CHECK) !== undefined) return
  doc.transact(() => meta.set(KEY_CHECK, sealed), LOCAL_ORIGIN)
}

/** Calls `listener` when another device changes the key check. @returns the unsubscribe function. */
export function onKeyCheckChange(doc: Y.Doc, listener: () => void): () => void {
  const meta = doc.getMap<unknown>(META)
  const handler = (event: Y.YMapEvent<unknown>, tr: Y.Transaction): void => {
    if (tr.origin !== LOCAL_ORIGIN && event.keysChanged.has(KEY_CHECK)) listener()
  }
  meta.observe(handler)
  return () => meta.unobserve(handler)
}
