import { Dexie } from 'dexie'
import { sha256Hex, toBlob } from './artifact-data.js'
import { invalidInput, MemoryError } from '../store/errors.js'
import { newId } from '../store/ids.js'
import { checkPageOptions, decodeCursor, encodeCursor, isAfterDescending, type Page, type PageOptions, pageFrom } from '../store/paging.js'
import { requireProject } from '../projects/projects.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkJson, checkOptions, checkString, type Json } from '../store/validate.js'
import { read, readOne, write } from '../store/write.js'

/** A file an agent produced in a project (or a run): its metadata. */
export interface Artifact {
  id: string
  projectId: string
  name: string
  mimeType: string
  /** Bytes. */
  size: number
  /** SHA-256 of the bytes, hex: checks bytes the app moves between devices (`attach`). */
  sha256: string
  runId?: string
  meta?: Json
  createdAt: number
  /** Whether the bytes are on this device (metadata synced from another device arrives without them). */
  onDevice: boolean
}
/** An artifact with its bytes (absent when they are not on this device). */
export interface ArtifactWithData extends Artifact {
  data?: Blob
}

/** What {@link ArtifactsApi.put} takes. */
export interface ArtifactInput {
  name: string
  mimeType: string
  data: Blob | string
  runId?: string
  meta?: Json
}
/** Options of {@link ArtifactsApi.list}. */
export interface ListArtifactsOptions extends PageOptions {
  runId?: string
}

/** A stored artifact: metadata, the bytes when on this device (`localSize` counts them against the budget). */
export interface ArtifactRow {
  id: string
  projectId: string
  name: string
  mimeType: string
  size: number
  sha256: string
  runId?: string
  meta?: Json
  createdAt: number
  hlc: string
  deletedAt?: number
  data?: Blob
  localSize: number
}

/** Longest artifact name (characters). */
export const MAX_ARTIFACT_NAME = 512
/** Largest `meta` (bytes of JSON). */
export const MAX_ARTIFACT_META = 64 * 1024
/** The default byte budget of a store's artifacts (256 MiB). */
export const DEFAULT_ARTIFACT_BUDGET = 256 * 1024 * 1024
const MIME = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;.*)?$/
const TABLES = ['artifacts', 'projects']

/** Files agents produced, stored as Blobs on the device; their metadata syncs with the project. */
export interface ArtifactsApi {
  /**
   * Stores a new artifact (a string is stored as UTF-8 text of `mimeType`).
   * @example const a = await memory.artifacts.put('p1', { name: 'report.md', mimeType: 'text/markdown', data: '# Report' })
   * @throws MemoryError `invalid_input` (bad name, MIME type, data, run id, meta or option), `limit_exceeded`
   * (name over 512 characters, meta over 64 KiB), `not_found` (unknown or archived project),
   * `quota_exceeded` (the store's artifact byte budget, or the browser's storage, is full).
   */
  put(projectId: string, artifact: ArtifactInput): Promise<Artifact>
  /** The artifact with its bytes (`data` absent when they are not on this device), or undefined. @throws MemoryError `invalid_input`. */
  get(id: string): Promise<ArtifactWithData | undefined>
  /** A project's artifacts (metadata only), newest first, one page; `runId`: only that run's. @throws MemoryError `invalid_input`. */
  list(projectId: string, options?: ListArtifactsOptions): Promise<Page<Artifact>>
  /** Deletes an artifact and its bytes (a tombstone, so the delete syncs). @returns false when there was none. @throws MemoryError `invalid_input`. */
  delete(id: string): Promise<boolean>
  /**
   * Gives this device the bytes of an artifact whose metadata came from another device
   * (the app moves the bytes itself, e.g. `get` there and `attach` here).
   * @throws MemoryError `not_found` (no such artifact), `conflict` (the bytes' size or SHA-256 differ
   * from the metadata), `invalid_input`, `quota_exceeded`.
   */
  attach(id: string, data: Blob): Promise<Artifact>
}

/** The public shape of a stored artifact. */
export function toArtifact(row: ArtifactRow): Artifact {
  const { hlc: _hlc, deletedAt: _deleted, data, localSize: _local, ...artifact } = row
  return { ...artifact, onDevice: data !== undefined }
}

/** Bytes of every artifact stored on this device. Run in a transaction over `artifacts`. */
export async function artifactBytesUsed(ctx: StoreContext): Promise<number> {
  let used = 0
  await ctx.db.table<ArtifactRow, string>('artifacts').each((r) => {
    used += r.localSize ?? 0
  })
  return used
}

/** Refuses to grow artifact bytes past the store's budget. Run in a transaction over `artifacts`. @throws MemoryError `quota_exceeded`. */
export async function checkArtifactBudget(ctx: StoreContext, adding: number): Promise<void> {
  const budget = ctx.artifactBudget ?? DEFAULT_ARTIFACT_BUDGET
  const used = await artifactBytesUsed(ctx)
  if (used + adding > budget) {
    throw new MemoryError(
      'quota_exceeded',
      `Artifacts would take ${used + adding} bytes, over this store's budget of ${budget} bytes; delete some artifacts or raise maxArtifactBytes`,
    )
  }
}

/** Checks a MIME type. @throws MemoryError `invalid_input`. */
export function checkMimeType(value: unknown): string {
  const mime = checkString('mimeType', value, { nonEmpty: true, maxLength: 255 }).trim()
  if (!MIME.test(mime)) throw invalidInput(`mimeType must look like "type/subtype", got ${JSON.stringify(mime)}`)
  return mime
}

/** Creates the artifacts namespace of a store. */
export function createArtifacts(ctx: StoreContext): ArtifactsApi {
  const table = () => ctx.db.table<ArtifactRow, string>('artifacts')
  return {
    async put(projectId, artifact) {
      checkId('projectId', projectId)
      const o = checkOptions('artifact', artifact, ['name', 'mimeType', 'data', 'runId', 'meta'])
      const name = checkString('name', o.name, { nonEmpty: true, maxLength: MAX_ARTIFACT_NAME }).trim()
      const mimeType = checkMimeType(o.mimeType)
      const blob = toBlob(o.data, mimeType)
      const runId = o.runId === undefined ? undefined : checkId('runId', o.runId)
      if (o.meta !== undefined) checkJson('meta', o.meta, MAX_ARTIFACT_META)
      ctx.assertOpen()
      // Hashing reads the bytes: done before the transaction, which must not wait on anything but IndexedDB.
      const sha256 = await sha256Hex(blob)
      const row: ArtifactRow = {
        id: newId(ctx.now()),
        projectId,
        name,
        mimeType,
        size: blob.size,
        sha256,
        createdAt: ctx.now(),
        hlc: '',
        data: blob,
        localSize: blob.size,
      }
      if (runId !== undefined) row.runId = runId
      if (o.meta !== undefined) row.meta = structuredClone(o.meta)
      return write(ctx, TABLES, async (w) => {
        await requireProject(ctx, projectId)
        await checkArtifactBudget(ctx, blob.size)
        row.hlc = w.hlc()
        await table().add(row)
        w.change('artifacts', 'put', row.id, projectId)
        return toArtifact(row)
      })
    },

    async get(id) {
      checkId('id', id)
      const row = await readOne(ctx, () => table().get(id))
      if (!row || row.deletedAt !== undefined) return undefined
      const out: ArtifactWithData = toArtifact(row)
      if (row.data !== undefined) out.data = row.data
      return out
    },

    async list(projectId, options) {
      checkId('projectId', projectId)
      const o = checkPageOptions(options, ['runId'])
      const runId = o.runId === undefined ? undefined : checkId('runId', o.runId)
      const cursor = o.after === undefined ? undefined : decodeCursor(o.after)
      const rows = await read(ctx, ['artifacts'], () =>
        table()
          .where('[projectId+createdAt]')
          .between([projectId, Dexie.minKey], [projectId, Dexie.maxKey])
          .reverse()
          .filter((r) => r.deletedAt === undefined && (runId === undefined || r.runId === runId) && isAfterDescending(r.createdAt, r.id, cursor))
          .limit(o.limit + 1)
          .toArray(),
      )
      return pageFrom(rows.map(toArtifact), o.limit, (a) => encodeCursor(a.createdAt, a.id))
    },

    async delete(id) {
      checkId('id', id)
      return write(ctx, ['artifacts'], async (w) => {
        const row = await table().get(id)
        if (!row || row.deletedAt !== undefined) return false
        const { data: _bytes, ...rest } = row
        await table().put({ ...rest, deletedAt: ctx.now(), localSize: 0, hlc: w.hlc(row.hlc) })
        w.change('artifacts', 'delete', id, row.projectId)
        return true
      })
    },

    async attach(id, data) {
      checkId('id', id)
      if (typeof Blob === 'undefined' || !(data instanceof Blob)) throw invalidInput('data must be a Blob')
      ctx.assertOpen()
      const sha256 = await sha256Hex(data)
      return write(ctx, ['artifacts'], async () => {
        const row = await table().get(id)
        if (!row || row.deletedAt !== undefined) throw new MemoryError('not_found', `No artifact with id ${JSON.stringify(id)}`)
        if (data.size !== row.size || sha256 !== row.sha256)
          throw new MemoryError('conflict', `These bytes are not artifact ${id}: size or SHA-256 differ from its metadata`)
        if (row.data !== undefined) return toArtifact(row)
        await checkArtifactBudget(ctx, data.size)
        const next = { ...row, data, localSize: data.size }
        // Local bytes only: the metadata is unchanged, so nothing to sync and no change to emit.
        await table().put(next)
        return toArtifact(next)
      })
    },
  }
}
