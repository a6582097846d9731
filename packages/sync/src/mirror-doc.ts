import type { MirroredKind, MirroredRecord } from '@engram/core'
import { IDENTITY_FIELDS } from '@engram/core/internal'
import { compareHlc, isHlc, MemoryError, MIRRORED_KINDS, PROJECT_DOC_KINDS, type StampVerdict } from '@engram/core'
import type * as Y from 'yjs'
import { KeyValue } from './key-value.js'
import type { ValueCipher } from './value-cipher.js'

/** The kinds a project document holds (core's synced kinds), one `KeyValue` (a Y.Array of `{ key, val }`) each. */
export { MIRRORED_KINDS }

/** Transaction origin of everything this device writes into a project document. */
export const LOCAL_ORIGIN: unique symbol = Symbol('engram-sync-local')

/** A value as stored in the document: the record's row without what the entry already names (project, key), with `hlc`. */
export type DocValue = MirroredRecord['row'] & { hlc: string }

/**
 * A value of an end-to-end encrypted project: the HLC stays in clear (conflict
 * resolution without the key; it only tells the relay when a write happened,
 * which it sees anyway), the rest of the value is AES-GCM sealed.
 */
export interface SealedDocValue {
  hlc: string
  sealed: Uint8Array
}

/** An entry of the document this device cannot read (other key, or plain vs encrypted). */
export interface UnreadableEntry {
  kind: MirroredKind
  id: string
  error: MemoryError
}

/** An entry of the document whose stamp is not a well-formed HLC stamp: never applied. */
export interface MalformedEntry {
  kind: MirroredKind
  id: string
  hlc: string
}

/** What {@link MirrorDoc.read} found. */
export interface ReadResult {
  records: MirroredRecord[]
  unreadable: UnreadableEntry[]
  malformed: MalformedEntry[]
  /** Entries whose id names no record of this project (it does not decode): never applied. */
  invalid: Array<{ kind: MirroredKind; id: string }>
}

/** What {@link MirrorDoc.publish} did. */
export interface PublishResult {
  /** Records written into the document (the others it held already, at the same or a newer stamp). */
  written: number
}

/**
 * Judges a stamp held in the document. Only 'malformed' matters: an entry held at a malformed
 * stamp supersedes nothing, on every device alike ('ahead' counts as 'accepted': which record
 * wins never depends on this device's clock).
 */
export type StampJudge = (hlc: unknown) => StampVerdict

/** The additional authenticated data of a sealed value: the entry it belongs to, at its HLC. */
const sealContext = (projectId: string, kind: MirroredKind, id: string, hlc: string): string =>
  `engram-value\u0000${projectId}\u0000${kind}\u0000${id}\u0000${hlc}`
const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** The row field each kind's document id stands for; it is left out of stored values (smaller documents). */
const IDENTITY = IDENTITY_FIELDS

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
  /** True when this device seals values (the `encryption` option). */
  readonly encrypted: boolean
  /**
   * The records stored under the given ids (decrypted first when encrypted);
   * malformed values are left out, values this device cannot read are listed.
   */
  read(ids: Iterable<readonly [MirroredKind, string]>): Promise<ReadResult>
  /** Every record of the document, as {@link MirrorDoc.read}. */
  readAll(): Promise<ReadResult>
  /**
   * Writes records in one transaction with {@link LOCAL_ORIGIN}, skipping any
   * the document already holds at the same or a newer HLC (they are superseded).
   * An entry held at a malformed stamp, or sealed with a key this device does not
   * have, supersedes nothing: it is replaced. Sealing happens before the
   * transaction; without encryption the write is synchronous.
   * @throws MemoryError `crypto` when sealing fails.
   */
  publish(records: readonly MirroredRecord[]): Promise<PublishResult>
  /** The stamp the document holds for a record (well-formed only), e.g. the floor an edit of it must follow. */
  heldStamp(kind: MirroredKind, id: string): string | undefined
  /** Calls `listener` with the ids changed by every transaction not made by this mirror. */
  onRemoteChange(listener: (kind: MirroredKind, ids: string[]) => void): () => void
  /** Deletes every entry of every kind in one local transaction (a purged session's document). */
  clear(): void
}

/**
 * Wraps a project document; creates a key-value type per kind (`kinds`, default
 * the project document's: {@link MIRRORED_KINDS} and sessions; a session
 * document holds `messages` only). With a cipher, values are sealed and opened.
 * `judge` tells which held stamps are malformed (default: the stamp format's rule).
 */
export function createMirrorDoc(
  doc: Y.Doc,
  projectId: string,
  cipher?: ValueCipher,
  judge: StampJudge = (hlc) => (isHlc(hlc) ? 'accepted' : 'malformed'),
  kinds: readonly MirroredKind[] = PROJECT_DOC_KINDS,
): MirrorDoc {
  type Stored = DocValue | SealedDocValue
  const maps = new Map<MirroredKind, KeyValue<Stored>>()
  for (const kind of kinds) maps.set(kind, new KeyValue<Stored>(doc.getArray(kind)))
  const kv = (kind: MirroredKind): KeyValue<Stored> => maps.get(kind)!
  /** Entries found sealed with a key this device does not have: they supersede nothing. */
  const unreadableHeld = new Set<string>()
  /** The document holds the record at the same or a newer stamp (a malformed or unreadable entry holds nothing). */
  const holds = (record: MirroredRecord): boolean => {
    const held = kv(record.kind).get(record.id)
    if (typeof held !== 'object' || held === null || judge(held.hlc) === 'malformed' || unreadableHeld.has(`${record.kind}:${record.id}`)) return false
    return compareHlc(held.hlc, record.hlc) >= 0
  }

  /** The record of a stored value; undefined when malformed (no stamp, an id of another project): never applied. */
  async function toRecord(kind: MirroredKind, id: string, val: Stored | undefined): Promise<MirroredRecord | undefined> {
    if (typeof val !== 'object' || val === null || !isHlc(val.hlc)) return undefined
    const identity = identityOf(kind, projectId, id)
    if (identity === undefined) return undefined
    const isSealed = (val as { sealed?: unknown }).sealed instanceof Uint8Array
    if (isSealed && !cipher)
      throw new MemoryError('crypto', `Project ${projectId} is end-to-end encrypted on another device: pass startSync({ encryption }) to read it`)
    if (!isSealed && cipher)
      throw new MemoryError(
        'crypto',
        `A device syncs project ${projectId} without encryption while this one encrypts it: give every device the same encryption option`,
      )
    let fields = val as unknown as { [field: string]: unknown }
    if (cipher) {
      const plain = await cipher.open((val as SealedDocValue).sealed, sealContext(projectId, kind, id, val.hlc))
      try {
        fields = JSON.parse(decoder.decode(plain)) as { [field: string]: unknown }
      } catch {
        return undefined // authentic but not JSON: a buggy client with the same key; skipped like any malformed value
      }
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return undefined
    }
    return { kind, projectId, id, hlc: val.hlc, row: { ...fields, hlc: val.hlc, projectId, [IDENTITY[kind]]: identity } as MirroredRecord['row'] }
  }

  async function read(ids: Iterable<readonly [MirroredKind, string, Stored?]>): Promise<ReadResult> {
    const result: ReadResult = { records: [], unreadable: [], malformed: [], invalid: [] }
    const opened = [...ids].map(async ([kind, id, given]) => {
      const val = given ?? kv(kind).get(id)
      if (typeof val === 'object' && val !== null && !isHlc(val.hlc)) {
        result.malformed.push({ kind, id, hlc: String(val.hlc).slice(0, 80) })
        return
      }
      if (typeof val === 'object' && val !== null && identityOf(kind, projectId, id) === undefined) {
        result.invalid.push({ kind, id })
        return
      }
      try {
        const record = await toRecord(kind, id, val)
        unreadableHeld.delete(`${kind}:${id}`)
        if (record) result.records.push(record)
      } catch (error) {
        if (!(error instanceof MemoryError && error.code === 'crypto')) throw error
        unreadableHeld.add(`${kind}:${id}`)
        result.unreadable.push({ kind, id, error })
      }
    })
    await Promise.all(opened)
    return result
  }

  /** A record's row without the entry's identity fields (and without `hlc`, which the stored value carries). */
  function storedValueOf(record: MirroredRecord): MirroredRecord['row'] {
    const { projectId: _project, [IDENTITY[record.kind]]: _identity, hlc: _hlc, ...value } = record.row
    return value
  }

  async function seal(record: MirroredRecord, c: ValueCipher): Promise<SealedDocValue> {
    const sealed = await c.seal(encoder.encode(JSON.stringify(storedValueOf(record))), sealContext(projectId, record.kind, record.id, record.hlc))
    return { hlc: record.hlc, sealed }
  }

  /** `checked`: {@link holds} was false for every record just now, unless the document may have moved on since (sealing awaited). */
  function write(entries: ReadonlyArray<readonly [MirroredRecord, Stored]>, checked: boolean): PublishResult {
    const result: PublishResult = { written: 0 }
    const written = entries.length > 1 ? new Set<string>() : undefined
    doc.transact(() => {
      for (const [record, stored] of entries) {
        // A record of an entry written earlier in this batch is judged against that write.
        if ((!checked || written?.has(`${record.kind}:${record.id}`)) && holds(record)) continue
        kv(record.kind).set(record.id, stored)
        written?.add(`${record.kind}:${record.id}`)
        result.written++
      }
    }, LOCAL_ORIGIN)
    return result
  }

  return {
    doc,
    encrypted: cipher !== undefined,
    read: (ids) => read(ids),
    readAll() {
      const all: Array<[MirroredKind, string, Stored]> = []
      for (const kind of kinds) for (const [id, entry] of kv(kind).map) all.push([kind, id, entry.val])
      return read(all)
    },
    async publish(records) {
      const todo = records.filter((r) => !holds(r))
      if (todo.length === 0) return { written: 0 }
      // In clear the write follows at once; sealed values are checked again (the document may move on meanwhile).
      if (!cipher)
        return write(
          todo.map((r) => [r, { ...storedValueOf(r), hlc: r.hlc }] as const),
          true,
        )
      return write(await Promise.all(todo.map(async (r) => [r, await seal(r, cipher)] as const)), false)
    },
    heldStamp(kind, id) {
      const held = maps.get(kind)?.get(id)
      return typeof held === 'object' && held !== null && isHlc(held.hlc) ? held.hlc : undefined
    },
    onRemoteChange(listener) {
      const offs = kinds.map((kind) => {
        const handler = (changes: Map<string, { action: string }>, tr: Y.Transaction): void => {
          if (tr.origin === LOCAL_ORIGIN) return
          const ids = [...changes].filter(([, c]) => c.action !== 'delete').map(([id]) => id)
          if (ids.length > 0) listener(kind, ids)
        }
        kv(kind).on('change', handler)
        return () => kv(kind).off('change', handler)
      })
      return () => {
        for (const off of offs) off()
      }
    },
    clear() {
      doc.transact(() => {
        for (const kind of kinds) for (const id of [...kv(kind).map.keys()]) kv(kind).delete(id)
      }, LOCAL_ORIGIN)
    },
  }
}
