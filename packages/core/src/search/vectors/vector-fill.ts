import type { VectorRow } from '../index/index-rows.js'
import type { ProjectVectors, VectorCache } from './vector-cache.js'
import { decodeVectorInto } from './vector-codec.js'

/** Builds the cache of a project from its stored rows (kept only if nothing changed since `epoch`). */
export function loadProjectVectors(cache: VectorCache, projectId: string, dimensions: number, rows: readonly VectorRow[], epoch: number): ProjectVectors {
  const pv: ProjectVectors = {
    dimensions,
    count: 0,
    data: new Float32Array(Math.max(16, rows.length) * dimensions),
    docIds: [],
    kinds: [],
    sids: [],
    ats: [],
    slots: new Map(),
  }
  for (const row of rows) add(pv, row)
  cache.keep(projectId, pv, epoch)
  return pv
}

/** Adds freshly embedded rows to the caches loaded so far (after their transaction committed). */
export function addVectors(cache: VectorCache, rows: readonly VectorRow[]): void {
  cache.epoch++
  for (const row of rows) {
    const pv = cache.get(row.projectId)
    if (pv) add(pv, row)
  }
}

function add(pv: ProjectVectors, row: VectorRow): void {
  if (row.vector.length !== pv.dimensions) return
  let slot = pv.slots.get(row.docId)
  if (slot === undefined) {
    slot = pv.count++
    if (pv.count * pv.dimensions > pv.data.length) {
      const grown = new Float32Array(pv.data.length * 2)
      grown.set(pv.data)
      pv.data = grown
    }
    pv.slots.set(row.docId, slot)
  }
  decodeVectorInto(row, pv.data, slot * pv.dimensions)
  pv.docIds[slot] = row.docId
  pv.kinds[slot] = row.kind
  pv.sids[slot] = row.sid
  pv.ats[slot] = row.at
}
