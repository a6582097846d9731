import type { MirroredKind, MirroredRecord } from '@engram/core'
import { compareHlc } from '@engram/core'
import { YKeyValue } from 'y-utility/y-keyvalue'
import type * as Y from 'yjs'

/** The kinds a project document holds, one `YKeyValue` (a Y.Array of `{ key, val }`) each. */
export const MIRRORED_KINDS: readonly MirroredKind[] = ['facts', 'blocks', 'summaries']

/** Transaction origin of everything this device writes into a project document. */
export const LOCAL_ORIGIN: unique symbol = Symbol('engram-sync-local')

/** A value as stored in the document: the record's row without what the entry already names (project, key), with `hlc`. */
export type DocValue = MirroredRecord['row'] & { hlc: string }

/** The row field each kind's document id stands for; it is left out of stored values (smaller documents). */
const IDENTITY: Record<MirroredKind, string> = { facts: 'key', blocks: 'label', summaries: 'id' }

/** The identity field value of a record id: a fact id is `factId(projectId, key)`, the others are the field itself. */
function identityOf(kind: MirroredKind, projectId: string, id: string): string | undefined {
  if (kind !== 'facts') return id
  const prefix = `${encodeURIComponent(projectId)}/`
  if (!id.startsWith(prefix)) return undefined
  try {
    return decodeURIComponent(id.slice(prefix.length))
  } catch {
    return undefined
  }
}

/**
 * One project's `Y.Doc` as the mirror sees it: `facts`, `blocks` and
 * `summaries`, each a `YKeyValue` keyed by the record's stable id. The layout
 * was chosen by measurement (docs/sync.md): after 10,000 facts × 10 overwrites
 * with half deleted, a `Y.Map` (one deleted item per overwrite) was 2.7× the
 * live facts' JSON, `YKeyValue` 1.9×.
 */
export interface MirrorDoc {
  readonly doc: Y.Doc
  /** The record stored under `id`, or undefined. */
  get(kind: MirroredKind, id: string): MirroredRecord | undefined
  /** Every record of the document. */
  records(): MirroredRecord[]
  /**
   * Writes records in one transaction with {@link LOCAL_ORIGIN}, skipping any
   * the document already holds at the same or a newer HLC.
   * @returns how many were written.
   */
  publish(records: readonly MirroredRecord[]): number
  /** Calls `listener` with the ids changed by every transaction not made by this mirror. */
  onRemoteChange(listener: (kind: MirroredKind, ids: string[]) => void): () => void
}

/** Wraps a project document; creates its three key-value types. */
export function createMirrorDoc(doc: Y.Doc, projectId: string): MirrorDoc {
  const maps = new Map<MirroredKind, YKeyValue<DocValue>>()
  for (const kind of MIRRORED_KINDS) maps.set(kind, new YKeyValue<DocValue>(doc.getArray(kind)))
  const kv = (kind: MirroredKind): YKeyValue<DocValue> => maps.get(kind)!

  function toRecord(kind: MirroredKind, id: string, val: DocValue | undefined): MirroredRecord | undefined {
    // A malformed value (no stamp, an id of another project) is never applied.
    if (typeof val !== 'object' || val === null || typeof val.hlc !== 'string') return undefined
    const identity = identityOf(kind, projectId, id)
    if (identity === undefined) return undefined
    return { kind, projectId, id, hlc: val.hlc, row: { ...val, projectId, [IDENTITY[kind]]: identity } }
  }

  return {
    doc,
    get: (kind, id) => toRecord(kind, id, kv(kind).get(id)),
    records() {
      const out: MirroredRecord[] = []
      for (const kind of MIRRORED_KINDS) {
        for (const [id, entry] of kv(kind).map) {
          const record = toRecord(kind, id, entry.val)
          if (record) out.push(record)
        }
      }
      return out
    },
    publish(records) {
      let written = 0
      doc.transact(() => {
        for (const record of records) {
          const held = kv(record.kind).get(record.id)
          if (held !== undefined && compareHlc(held.hlc, record.hlc) >= 0) continue
          const { projectId: _project, [IDENTITY[record.kind]]: _identity, ...value } = record.row
          kv(record.kind).set(record.id, { ...value, hlc: record.hlc })
          written++
        }
      }, LOCAL_ORIGIN)
      return written
    },
    onRemoteChange(listener) {
      const offs = MIRRORED_KINDS.map((kind) => {
        const handler = (changes: Map<string, { action: string }>, tr: Y.Transaction): void => {
          if (tr.origin === LOCAL_ORIGIN) return
          const ids = [...changes].filter(([, c]) => c.action !== 'delete').map(([id]) => id)
          if (ids.length > 0) listener(kind, ids)
        }
        kv(kind).on('change', handler)
        return () => kv(kind).off('change', handler)
      })
      return () => offs.forEach((off) => off())
    },
  }
}
