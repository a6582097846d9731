import type { HitKind } from './search.js'
import type { VectorRow } from './index-rows.js'
import type { IndexChanges } from './index-state.js'

/** The vectors of one project in one contiguous Float32Array (row i at i * dimensions). */
export interface ProjectVectors {
  dimensions: number
  count: number
  data: Float32Array
  docIds: string[]
  kinds: HitKind[]
  sids: (string | undefined)[]
  ats: number[]
  slots: Map<string, number>
}

/**
 * Per-project vector caches, loaded lazily from the `vectors` table on the
 * first vector query and grown in place as the embed queue drains.
 */
export class VectorCache {
  private readonly projects = new Map<string, ProjectVectors>()
  epoch = 0

  get(projectId: string): ProjectVectors | undefined {
    return this.projects.get(projectId)
  }

  /** Builds the cache of a project from its stored rows (kept only if nothing changed meanwhile). */
  load(projectId: string, dimensions: number, rows: readonly VectorRow[], epoch: number): ProjectVectors {
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
    if (epoch === this.epoch) this.projects.set(projectId, pv)
    return pv
  }

  /** Adds freshly embedded rows (after their transaction committed). */
  added(rows: readonly VectorRow[]): void {
    this.epoch++
    for (const row of rows) {
      const pv = this.projects.get(row.projectId)
      if (pv) add(pv, row)
    }
  }

  /** Drops the caches of projects that lost vectors; they reload on the next query. */
  apply(changes: IndexChanges): void {
    if (!changes.reset && changes.vectorProjects.size === 0) return
    if (changes.reset) this.projects.clear()
    for (const projectId of changes.vectorProjects) this.projects.delete(projectId)
    this.epoch++
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
  pv.data.set(row.vector, slot * pv.dimensions)
  pv.docIds[slot] = row.docId
  pv.kinds[slot] = row.kind
  pv.sids[slot] = row.sid
  pv.ats[slot] = row.at
}
