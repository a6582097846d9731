import type { Checkpoint as RunCheckpoint, Json, Memory } from '@engram/core'
import { decodeBlob, type EncodedBlob } from './blob-codec.js'

/** The part of a memory the checkpointer uses: Engram's runs namespace. */
export type RunsMemory = Pick<Memory, 'runs'>

/** The head of a stored blob: what it is and how many pieces follow it. */
export interface BlobHead {
  type: string
  encoding: 'text' | 'base64'
  count: number
}

/**
 * Writes a blob's pieces as phases `<base>:<n>` of a run, then its head as
 * phase `<base>` with `extra`: the head is written last, so a blob whose
 * head exists is whole (a crash before leaves pieces nothing points to).
 */
export async function writeBlob(runs: RunsMemory['runs'], runId: string, base: string, blob: EncodedBlob, extra: Record<string, Json>): Promise<void> {
  for (const [n, piece] of blob.pieces.entries()) {
    await runs.setCheckpoint(runId, `${base}:${n}`, { status: 'piece', output: piece })
  }
  const head: Record<string, Json> = { ...extra, type: blob.type, encoding: blob.encoding, count: blob.pieces.length }
  await runs.setCheckpoint(runId, base, { status: 'head', output: head })
}

/** A blob read back: its head fields and its bytes. */
export interface StoredBlob {
  head: BlobHead & Record<string, Json>
  bytes: Uint8Array
}

/** Reads every whole blob of a run's phases, in creation order of their heads. */
export function readBlobs(phases: readonly RunCheckpoint[]): StoredBlob[] {
  const pieces = new Map<string, string>()
  for (const p of phases) if (p.status === 'piece' && typeof p.output === 'string') pieces.set(p.phase, p.output)
  const blobs: StoredBlob[] = []
  for (const p of phases) {
    if (p.status !== 'head' || !isHead(p.output)) continue
    const parts: string[] = []
    for (let n = 0; n < p.output.count; n++) {
      const piece = pieces.get(`${p.phase}:${n}`)
      if (piece === undefined) break
      parts.push(piece)
    }
    if (parts.length !== p.output.count) continue
    blobs.push({ head: p.output, bytes: decodeBlob(p.output.encoding, parts) })
  }
  return blobs
}

function isHead(output: Json | undefined): output is BlobHead & Record<string, Json> {
  if (typeof output !== 'object' || output === null || Array.isArray(output)) return false
  return typeof output.type === 'string' && (output.encoding === 'text' || output.encoding === 'base64') && typeof output.count === 'number'
}
