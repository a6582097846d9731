import * as Y from 'yjs'

/**
 * Merge stored updates into one snapshot through a fresh, garbage-collecting
 * document, so deleted content is dropped (unlike `Y.mergeUpdates`).
 *
 * @throws Error when an update cannot be decoded (the room is damaged).
 */
export function mergeUpdates(updates: Uint8Array[]): Uint8Array {
  const doc = new Y.Doc({ gc: true })
  try {
    doc.transact(() => {
      for (const update of updates) Y.applyUpdate(doc, update)
    })
    return Y.encodeStateAsUpdate(doc)
  } finally {
    doc.destroy()
  }
}
