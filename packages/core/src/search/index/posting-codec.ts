/*
 * Posting blocks as bytes: for each document, in increasing document number,
 * varint(number − previous number), varint(tf × 4 + kind code), varint(length).
 * A document a few dozen numbers after the previous one costs three bytes.
 */

/** Decoded postings of one term: parallel arrays in document-number order. */
export interface PostingList {
  count: number
  docs: Uint32Array
  tfs: Uint16Array
  kinds: Uint8Array
  lens: Uint32Array
}

/** Largest term frequency kept exactly (higher ones are stored as this). */
export const MAX_TF = 0xffff

/** Appends postings to a byte writer. */
export class PostingWriter {
  private buf: Uint8Array
  private at = 0
  count = 0
  last: number

  constructor(previous = 0, capacity = 256) {
    this.buf = new Uint8Array(capacity)
    this.last = previous
  }

  /** Starts from the bytes of an existing block (copied). */
  static from(bytes: Uint8Array, count: number, last: number): PostingWriter {
    const w = new PostingWriter(last, Math.max(256, bytes.length * 2))
    w.buf.set(bytes)
    w.at = bytes.length
    w.count = count
    return w
  }

  get bytes(): number {
    return this.at
  }

  /** Adds one posting; `doc` must be above every document already written. */
  add(doc: number, tf: number, kind: number, len: number): void {
    if (this.at + 20 > this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2)
      next.set(this.buf)
      this.buf = next
    }
    this.varint(doc - this.last)
    // Kinds 0–3 in the low two bits (the first format); kinds 4–7 as a tf above MAX_TF, which no older posting holds.
    this.varint(kind < 4 ? Math.min(tf, MAX_TF) * 4 + kind : (MAX_TF + 1 + Math.min(tf, MAX_TF)) * 4 + (kind - 4))
    this.varint(len)
    this.last = doc
    this.count++
  }

  /** Starts a new run of deltas from 0 after the bytes written (a segment row holds one run per term). */
  restart(): void {
    this.last = 0
  }

  /** The written bytes (a copy sized to fit). */
  finish(): Uint8Array {
    return this.buf.slice(0, this.at)
  }

  private varint(v: number): void {
    while (v >= 0x80) {
      this.buf[this.at++] = (v & 0x7f) | 0x80
      v = Math.floor(v / 128)
    }
    this.buf[this.at++] = v
  }
}

/** An empty list with room for `capacity` postings. */
export function emptyList(capacity: number): PostingList {
  return { count: 0, docs: new Uint32Array(capacity), tfs: new Uint16Array(capacity), kinds: new Uint8Array(capacity), lens: new Uint32Array(capacity) }
}

/**
 * Decodes blocks (in block order) into one list. `previous` of each block is
 * the `z` of the block before it (0 for the first).
 */
export function decodeBlocks(blocks: ReadonlyArray<{ c: number; p: Uint8Array }>): PostingList {
  let total = 0
  for (const b of blocks) total += b.c
  const out = emptyList(total)
  let i = 0
  let doc = 0
  for (const block of blocks) {
    const p = block.p
    let at = 0
    for (let k = 0; k < block.c; k++) {
      let v = 0
      let shift = 1
      let byte: number
      do {
        byte = p[at++]!
        v += (byte & 0x7f) * shift
        shift *= 128
      } while (byte & 0x80)
      doc += v
      v = 0
      shift = 1
      do {
        byte = p[at++]!
        v += (byte & 0x7f) * shift
        shift *= 128
      } while (byte & 0x80)
      const tk = v
      v = 0
      shift = 1
      do {
        byte = p[at++]!
        v += (byte & 0x7f) * shift
        shift *= 128
      } while (byte & 0x80)
      out.docs[i] = doc
      const tf = Math.floor(tk / 4)
      out.tfs[i] = tf > MAX_TF ? tf - MAX_TF - 1 : tf
      out.kinds[i] = tf > MAX_TF ? 4 + (tk & 3) : tk & 3
      out.lens[i] = v
      i++
    }
  }
  out.count = i
  return out
}
