import * as encoding from 'lib0/encoding'
import * as Y from 'yjs'

/** Room for the frame header and an update's struct and delete-set headers. */
const HEADER_BYTES = 64
/** A delete-set range takes at most two 8-byte varints. */
const RANGE_BYTES = 16

/** One update to send: its bytes, and whether it holds a single struct (it cannot be split further). */
export interface UpdatePart {
  update: Uint8Array
  indivisible: boolean
}

/** Delete ranges per client, as Yjs keeps them (`DeleteSet.clients`). */
export type DeleteRanges = ReadonlyMap<number, ReadonlyArray<{ clock: number; len: number }>>

/**
 * Everything `doc` holds beyond the state vector `from`, cut into Yjs updates
 * of at most `maxBytes` each (with room for the frame header): structs per
 * client in clock order, then the delete set `deletes` in ranges. Applied in
 * any order they give the same document as one `encodeStateAsUpdate`; a
 * struct larger than `maxBytes` travels alone (`indivisible`).
 *
 * Why: a relay closes frames over its limit (1009); one update with a
 * project's whole backlog would never get through.
 */
export function splitDocument(doc: Y.Doc, from: ReadonlyMap<number, number>, deletes: DeleteRanges, maxBytes: number): UpdatePart[] {
  const budget = Math.max(1, maxBytes - HEADER_BYTES)
  const parts: UpdatePart[] = []
  const clients = [...doc.store.clients.keys()].sort((a, b) => b - a)
  for (const client of clients) {
    const structs = doc.store.clients.get(client)!
    const last = structs[structs.length - 1]
    if (!last || last.id.clock + last.length <= (from.get(client) ?? 0)) continue
    const clock = Math.max(from.get(client) ?? 0, structs[0]!.id.clock)
    let chunk: Piece[] = []
    let total = 0
    const first = Y.findIndexSS(structs, clock)
    for (let i = first; i < structs.length; i++) {
      const struct = structs[i]!
      for (const piece of piecesOf(struct, i === first ? clock - struct.id.clock : 0, budget)) {
        if (chunk.length > 0 && total + piece.size > budget) {
          parts.push(writePieces(client, chunk))
          chunk = []
          total = 0
        }
        chunk.push(piece)
        total += piece.size
      }
    }
    if (chunk.length > 0) parts.push(writePieces(client, chunk))
  }
  parts.push(...splitDeletes(deletes, budget))
  return parts
}

/** A run `[from, to)` of the elements of one struct, with its encoded size. */
interface Piece {
  struct: Y.Item | Y.GC
  from: number
  to: number
  size: number
}

/** Content types whose elements can be sent apart (a merged run of array entries, deleted content). */
const SPLITTABLE = new Set<unknown>([Y.ContentAny, Y.ContentJSON, Y.ContentDeleted])

/**
 * A struct from element `from` on as one piece, or (when that is over
 * `budget` and its content can be cut) one piece per element: Yjs merges
 * consecutive entries of one client into one struct, so 12 pushes of 100 kB
 * can be a single struct of 1.2 MB.
 */
function piecesOf(struct: Y.Item | Y.GC, from: number, budget: number): Piece[] {
  const whole = { struct, from, to: struct.length, size: sliceSize(struct, from, struct.length) }
  const splittable = struct instanceof Y.Item && SPLITTABLE.has(struct.content.constructor)
  if (whole.size <= budget || !splittable || struct.length - from === 1) return [whole]
  const pieces: Piece[] = []
  for (let k = from; k < struct.length; k++) pieces.push({ struct, from: k, to: k + 1, size: sliceSize(struct, k, k + 1) })
  return pieces
}

function sliceSize(struct: Y.Item | Y.GC, from: number, to: number): number {
  const encoder = new Y.UpdateEncoderV1()
  writeSlice(encoder, struct, from, to)
  return encoding.length(encoder.restEncoder)
}

/** Writes the elements `[from, to)` of a struct as a struct of their own. */
function writeSlice(encoder: Y.UpdateEncoderV1, struct: Y.Item | Y.GC, from: number, to: number): void {
  if (to === struct.length) return struct.write(encoder, from)
  const { client, clock } = struct.id
  if (struct instanceof Y.GC) return new Y.GC(Y.createID(client, clock + from), to - from).write(encoder, 0)
  let content = struct.content.copy()
  if (from > 0) content = content.splice(from)
  content.splice(to - from)
  const origin = from > 0 ? Y.createID(client, clock + from - 1) : struct.origin
  new Y.Item(Y.createID(client, clock + from), null, origin, null, struct.rightOrigin, struct.parent, struct.parentSub, content).write(encoder, 0)
}

/** An update with consecutive pieces of one client's structs, and no deletes. */
function writePieces(client: number, pieces: readonly Piece[]): UpdatePart {
  // Consecutive pieces of one struct are written as one slice.
  const runs: Piece[] = []
  for (const p of pieces) {
    const prev = runs[runs.length - 1]
    if (prev && prev.struct === p.struct && prev.to === p.from) runs[runs.length - 1] = { ...prev, to: p.to, size: prev.size + p.size }
    else runs.push(p)
  }
  const encoder = new Y.UpdateEncoderV1()
  encoding.writeVarUint(encoder.restEncoder, 1)
  encoding.writeVarUint(encoder.restEncoder, runs.length)
  encoder.writeClient(client)
  encoding.writeVarUint(encoder.restEncoder, runs[0]!.struct.id.clock + runs[0]!.from)
  for (const run of runs) writeSlice(encoder, run.struct, run.from, run.to)
  encoding.writeVarUint(encoder.restEncoder, 0) // empty delete set
  const only = runs.length === 1 ? runs[0]! : undefined
  return { update: encoder.toUint8Array(), indivisible: only !== undefined && only.to - only.from === 1 }
}

/** A live update of one transaction, split like {@link splitDocument} when it is larger than `maxBytes`. */
export function splitTransaction(doc: Y.Doc, update: Uint8Array, transaction: Y.Transaction, maxBytes: number): UpdatePart[] {
  if (update.byteLength + HEADER_BYTES <= maxBytes) return [{ update, indivisible: false }]
  return splitDocument(doc, transaction.beforeState, transaction.deleteSet.clients, maxBytes)
}

/** The document beyond `from` as one update when it fits `maxBytes`, else split. */
export function diffParts(doc: Y.Doc, from: Uint8Array, maxBytes: number): UpdatePart[] {
  const whole = Y.encodeStateAsUpdate(doc, from)
  if (whole.byteLength + HEADER_BYTES <= maxBytes) return [{ update: whole, indivisible: false }]
  return splitDocument(doc, Y.decodeStateVector(from), Y.createDeleteSetFromStructStore(doc.store).clients, maxBytes)
}

/** Updates without structs that carry the delete ranges, at most `budget` bytes each. */
function splitDeletes(deletes: DeleteRanges, budget: number): UpdatePart[] {
  const perPart = Math.max(1, Math.floor(budget / RANGE_BYTES))
  const parts: UpdatePart[] = []
  let chunk: Array<[number, Array<{ clock: number; len: number }>]> = []
  let count = 0
  const flush = (): void => {
    if (count === 0) return
    const encoder = new Y.UpdateEncoderV1()
    encoding.writeVarUint(encoder.restEncoder, 0) // no structs
    encoding.writeVarUint(encoder.restEncoder, chunk.length)
    for (const [client, ranges] of chunk) {
      encoding.writeVarUint(encoder.restEncoder, client)
      encoding.writeVarUint(encoder.restEncoder, ranges.length)
      for (const r of ranges) {
        encoding.writeVarUint(encoder.restEncoder, r.clock)
        encoding.writeVarUint(encoder.restEncoder, r.len)
      }
    }
    parts.push({ update: encoder.toUint8Array(), indivisible: false })
    chunk = []
    count = 0
  }
  for (const [client, ranges] of [...deletes].sort((a, b) => b[0] - a[0])) {
    let i = 0
    while (i < ranges.length) {
      const take = ranges.slice(i, i + (perPart - count))
      chunk.push([client, take])
      count += take.length
      i += take.length
      if (count >= perPart) flush()
    }
  }
  flush()
  return parts
}
