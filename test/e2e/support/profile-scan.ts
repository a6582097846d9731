import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'

/*
 * What a disk reader finds in a closed browser profile: every file, read as
 * bytes. Chromium keeps IndexedDB in LevelDB, whose tables (.ldb) compress
 * their blocks with Snappy and whose values may be Snappy-compressed by Blink
 * too (`ff 11 02`), so a plain byte search would miss text there: tables are
 * parsed block by block and decompressed, logs (.log) are reassembled from
 * their fragments, and every key and value is searched as Latin-1 and UTF-16.
 * The raw bytes of every file are searched as well.
 */

/** Decompresses a raw Snappy buffer (no framing). @throws Error when malformed. */
export function snappyDecompress(input: Uint8Array): Uint8Array {
  let pos = 0
  let length = 0
  for (let shift = 0; ; shift += 7) {
    const b = input[pos++]
    if (b === undefined || shift > 28) throw new Error('snappy: bad length')
    length |= (b & 0x7f) << shift
    if (b < 0x80) break
  }
  length >>>= 0
  if (length > 256 * 1024 * 1024) throw new Error('snappy: too long')
  const out = new Uint8Array(length)
  let o = 0
  while (pos < input.length) {
    const tag = input[pos++]!
    const kind = tag & 3
    if (kind === 0) {
      let n = tag >> 2
      if (n >= 60) {
        const bytes = n - 59
        n = 0
        for (let i = 0; i < bytes; i++) n |= input[pos++]! << (8 * i)
      }
      n += 1
      if (o + n > length || pos + n > input.length) throw new Error('snappy: literal overflow')
      out.set(input.subarray(pos, pos + n), o)
      pos += n
      o += n
      continue
    }
    let n: number
    let offset: number
    if (kind === 1) {
      n = ((tag >> 2) & 7) + 4
      offset = ((tag >> 5) << 8) | input[pos++]!
    } else if (kind === 2) {
      n = (tag >> 2) + 1
      offset = input[pos]! | (input[pos + 1]! << 8)
      pos += 2
    } else {
      n = (tag >> 2) + 1
      offset = (input[pos]! | (input[pos + 1]! << 8) | (input[pos + 2]! << 16) | (input[pos + 3]! << 24)) >>> 0
      pos += 4
    }
    if (offset === 0 || offset > o || o + n > length) throw new Error('snappy: bad copy')
    for (let i = 0; i < n; i++, o++) out[o] = out[o - offset]!
  }
  if (o !== length) throw new Error('snappy: short output')
  return out
}

function varint(buf: Uint8Array, pos: number): [value: number, next: number] {
  let value = 0
  for (let shift = 0; shift < 64; shift += 7) {
    const b = buf[pos++]
    if (b === undefined) throw new Error('varint past the end')
    value += (b & 0x7f) * 2 ** shift
    if (b < 0x80) return [value, pos]
  }
  throw new Error('varint too long')
}

/** The entries (key, value) of one LevelDB block, prefix-compressed keys rebuilt. */
function blockEntries(block: Uint8Array): Array<[Uint8Array, Uint8Array]> {
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength)
  const restarts = view.getUint32(block.length - 4, true)
  const end = block.length - 4 - 4 * restarts
  const out: Array<[Uint8Array, Uint8Array]> = []
  let pos = 0
  let last = new Uint8Array(0)
  while (pos < end) {
    let shared: number
    let unshared: number
    let valueLength: number
    ;[shared, pos] = varint(block, pos)
    ;[unshared, pos] = varint(block, pos)
    ;[valueLength, pos] = varint(block, pos)
    const key = new Uint8Array(shared + unshared)
    key.set(last.subarray(0, shared))
    key.set(block.subarray(pos, pos + unshared), shared)
    pos += unshared
    out.push([key, block.subarray(pos, pos + valueLength)])
    pos += valueLength
    last = key
  }
  return out
}

/** Reads the block at `handle` of a table, decompressed. */
function tableBlock(file: Uint8Array, offset: number, size: number): Uint8Array {
  const data = file.subarray(offset, offset + size)
  const type = file[offset + size]
  return type === 1 ? snappyDecompress(data) : data
}

/** Every key and value of a LevelDB table (.ldb / .sst). */
function tableEntries(file: Uint8Array): Uint8Array[] {
  // The footer: the metaindex block's handle (skipped), then the index block's.
  const footer = file.subarray(file.length - 48)
  const [, afterMetaOffset] = varint(footer, 0)
  const [, afterMeta] = varint(footer, afterMetaOffset)
  const [indexOffset, afterIndexOffset] = varint(footer, afterMeta)
  const [indexSize] = varint(footer, afterIndexOffset)
  const out: Uint8Array[] = []
  for (const [, handle] of blockEntries(tableBlock(file, indexOffset, indexSize))) {
    const [offset, next] = varint(handle, 0)
    const [size] = varint(handle, next)
    for (const [key, value] of blockEntries(tableBlock(file, offset, size))) out.push(key, value)
  }
  return out
}

/** The records of a LevelDB log (.log, also MANIFEST), fragments joined. */
function logRecords(file: Uint8Array): Uint8Array[] {
  const BLOCK = 32 * 1024
  const out: Uint8Array[] = []
  let pending: Uint8Array[] = []
  let pos = 0
  while (pos + 7 <= file.length) {
    const left = BLOCK - (pos % BLOCK)
    if (left < 7) {
      pos += left
      continue
    }
    const length = file[pos + 4]! | (file[pos + 5]! << 8)
    const type = file[pos + 6]!
    const data = file.subarray(pos + 7, pos + 7 + length)
    pos += 7 + length
    if (type === 0) {
      // Zero padding (a preallocated or reused log): skip to the next block.
      pos += BLOCK - (pos % BLOCK)
      continue
    }
    if (type === 1) out.push(data)
    else if (type === 2) pending = [data]
    else if (type === 3) pending.push(data)
    else if (type === 4) {
      pending.push(data)
      out.push(Buffer.concat(pending))
      pending = []
    }
  }
  return out
}

/** Keys and values of a WriteBatch record of a log (each key and value its own part). */
function batchParts(record: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = []
  let pos = 12
  try {
    while (pos < record.length) {
      const tag = record[pos++]
      let n: number
      ;[n, pos] = varint(record, pos)
      out.push(record.subarray(pos, pos + n))
      pos += n
      if (tag === 1) {
        ;[n, pos] = varint(record, pos)
        out.push(record.subarray(pos, pos + n))
        pos += n
      }
    }
  } catch {
    // Not a write batch (a MANIFEST record): its bytes are searched whole.
  }
  return out
}

/** A value as Blink stored it: unwrapped when Snappy-compressed (`<varint> ff 11 02 <snappy>`). */
function unwrapValue(value: Uint8Array): Uint8Array[] {
  for (let at = 0; at < Math.min(value.length - 3, 10); at++) {
    if (value[at] === 0xff && value[at + 1] === 0x11 && value[at + 2] === 0x02) {
      try {
        return [value, snappyDecompress(value.subarray(at + 3))]
      } catch {
        return [value]
      }
    }
  }
  return [value]
}

function texts(bytes: Uint8Array): string[] {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return [b.toString('latin1'), b.toString('utf16le'), b.subarray(1).toString('utf16le')]
}

/** The readable parts of one profile file (raw bytes, and decoded LevelDB content). */
export function fileParts(name: string, bytes: Uint8Array): Uint8Array[] {
  const parts: Uint8Array[] = [bytes]
  try {
    if (name.endsWith('.ldb') || name.endsWith('.sst')) parts.push(...tableEntries(bytes).flatMap(unwrapValue))
    else if (name.endsWith('.log') || /MANIFEST-\d+$/.test(name)) {
      for (const record of logRecords(bytes)) parts.push(record, ...batchParts(record).flatMap(unwrapValue))
    } else parts.push(...unwrapValue(bytes))
  } catch (error) {
    parts.push(new TextEncoder().encode(`unreadable: ${String(error)}`))
  }
  return parts
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...(await walk(path)))
    else if (entry.isFile()) out.push(path)
  }
  return out
}

/** Where each needle (case-sensitive) appears in the files under `dir`: needle → files (relative paths). */
export async function scanProfile(dir: string, needles: readonly string[]): Promise<Record<string, string[]>> {
  const found: Record<string, string[]> = {}
  for (const path of await walk(dir)) {
    let bytes: Uint8Array
    try {
      bytes = await readFile(path)
    } catch {
      continue
    }
    const haystacks = fileParts(path, bytes).flatMap(texts)
    for (const needle of needles) {
      if (haystacks.some((h) => h.includes(needle))) (found[needle] ??= []).push(relative(dir, path))
    }
  }
  return found
}
