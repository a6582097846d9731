import { Dexie } from 'dexie'
import { type ArtifactRow, checkMimeType, MAX_ARTIFACT_META, MAX_ARTIFACT_NAME } from './artifacts.js'
import { invalidInput } from '../store/errors.js'
import { compareHlc } from '../store/hlc.js'
import { checkEnvelope, checkSameProject, type SyncedKind, travelling } from '../store/synced-kind.js'
import { checkId, checkJson, checkNumber, checkString, checkTime, type Json } from '../store/validate.js'

const FIELDS = ['id', 'projectId', 'name', 'mimeType', 'size', 'sha256', 'runId', 'meta', 'createdAt', 'hlc', 'deletedAt'] as const
/** Fields that stay on the device: the bytes and what they count. */
const LOCAL = ['data', 'localSize', 'dataBase64']

/**
 * Artifacts as sync mirrors them: metadata only, keyed by the artifact id. The
 * bytes never travel through sync; a device that gets the metadata has
 * `onDevice: false` until the app gives it the bytes (`artifacts.attach`).
 * Applying a newer record keeps local bytes whose SHA-256 still matches; a
 * tombstone drops them.
 */
export const syncedArtifacts: SyncedKind<ArtifactRow> = {
  kind: 'artifacts',
  tables: ['artifacts'],
  read: (ctx, _projectId, id) => ctx.db.table<ArtifactRow, string>('artifacts').get(id),
  readProject: (ctx, projectId) =>
    ctx.db.table<ArtifactRow, string>('artifacts').where('[projectId+createdAt]').between([projectId, Dexie.minKey], [projectId, Dexie.maxKey]).toArray(),
  toRecord: (row) => ({ kind: 'artifacts', projectId: row.projectId, id: row.id, hlc: row.hlc, row: travelling(row, LOCAL) }),
  check(record) {
    const r = checkEnvelope(record, 'artifacts', FIELDS)
    if (r.id !== undefined && r.id !== record.id) throw invalidInput('record.row.id differs from record.id')
    const sha256 = checkString('artifact.sha256', r.sha256)
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw invalidInput('artifact.sha256 must be 64 lower-case hex characters')
    const row: ArtifactRow = {
      id: record.id,
      projectId: record.projectId,
      name: checkString('artifact.name', r.name, { nonEmpty: true, maxLength: MAX_ARTIFACT_NAME }),
      mimeType: checkMimeType(r.mimeType),
      size: checkNumber('artifact.size', r.size, { min: 0, integer: true }),
      sha256,
      createdAt: checkTime('artifact.createdAt', r.createdAt),
      hlc: record.hlc,
      localSize: 0,
    }
    if (r.runId !== undefined) row.runId = checkId('artifact.runId', r.runId)
    if (r.meta !== undefined) {
      checkJson('artifact.meta', r.meta, MAX_ARTIFACT_META)
      row.meta = structuredClone(r.meta) as Json
    }
    if (r.deletedAt !== undefined) row.deletedAt = checkTime('artifact.deletedAt', r.deletedAt)
    return row
  },
  async apply(ctx, w, row) {
    ctx.clock.receive(row.hlc)
    const table = ctx.db.table<ArtifactRow, string>('artifacts')
    const stored = await table.get(row.id)
    checkSameProject('artifacts', row.id, stored, row.projectId)
    if (compareHlc(row.hlc, stored?.hlc) <= 0) return false
    const next: ArtifactRow = { ...row }
    if (row.deletedAt === undefined && stored?.data !== undefined && stored.sha256 === row.sha256) {
      next.data = stored.data
      next.localSize = stored.localSize
    }
    await table.put(next)
    w.change('artifacts', row.deletedAt === undefined ? 'put' : 'delete', row.id, row.projectId)
    return true
  },
}
