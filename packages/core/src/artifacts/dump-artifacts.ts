import { base64ToBytes, blobToBase64, sha256Hex } from './artifact-data.js'
import type { Dump } from '../dump/dump-validate.js'
import { invalidInput } from '../store/errors.js'

type Row = Record<string, unknown>

/*
 * How an artifact's Blob travels in a JSON dump: as `dataBase64` (the bytes in
 * base64) beside its metadata. An artifact whose bytes are not on the device
 * has no `dataBase64`. Import turns it back into a Blob of the artifact's MIME
 * type after checking its size and SHA-256 against the metadata.
 */

/** Export: artifact rows with their Blob as base64 text. Runs after the read transaction (reading a Blob is not an IndexedDB request). */
export async function encodeArtifactRows(rows: Row[]): Promise<Row[]> {
  return Promise.all(
    rows.map(async ({ data, localSize: _local, ...rest }) => (data instanceof Blob ? { ...rest, dataBase64: await blobToBase64(data) } : rest)),
  )
}

/**
 * Import: a dump whose artifact rows carry their bytes as Blobs (`data`, `localSize`).
 * @throws MemoryError `invalid_input` when `dataBase64` is not base64 or its bytes do not match `size` and `sha256`.
 */
export async function decodeArtifactRows(dump: Dump): Promise<Dump> {
  const rows = dump.tables.artifacts as Row[] | undefined
  if (rows === undefined || rows.length === 0) return dump
  const decoded = await Promise.all(
    rows.map(async (row, i) => {
      const { dataBase64, data: _data, localSize: _local, ...rest } = row
      if (dataBase64 === undefined) return { ...rest, localSize: 0 }
      const where = `dump.tables.artifacts[${i}].dataBase64`
      const blob = new Blob([base64ToBytes(dataBase64, where)], { type: String(rest.mimeType) })
      if (blob.size !== rest.size || (await sha256Hex(blob)) !== rest.sha256) throw invalidInput(`${where} does not match the artifact's size and sha256`)
      return { ...rest, data: blob, localSize: blob.size }
    }),
  )
  return { ...dump, tables: { ...dump.tables, artifacts: decoded } }
}
