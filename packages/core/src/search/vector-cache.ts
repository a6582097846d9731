import type { HitKind } from './search.js'
import type { VectorRow } from './index-rows.js'
import type { IndexDelta } from './posting-cache.js'

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

/** Which vectors a query may return. */
export interface VectorFilter {
  kinds?: ReadonlySet<HitKind>
  sessionId?: string
  excludeSessionId?: string
}

/** Scales `v` to unit length in place (cosine becomes a dot product). */
export function normalize(v: Float32Array): Float32Array {
  let sum = 0
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!
  const norm = Math.sqrt(sum)
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm
  return v
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
  apply(deltas: readonly IndexDelta[]): void {
    let changed = false
    for (const d of deltas) {
      if (d.op === 'put') continue
      if (d.op === 'reset') this.projects.clear()
      else this.projects.delete(d.projectId)
      changed = true
    }
    if (changed) this.epoch++
  }

  /** Exact cosine top-k: `[docIndex, similarity]` pairs, best first. */
  static topK(pv: ProjectVectors, query: Float32Array, k: number, filter: VectorFilter): Array<[number, number]> {
    const dim = pv.dimensions
    const top: Array<[number, number]> = []
    const { data, kinds, sids } = pv
    for (let i = 0; i < pv.count; i++) {
      if (filter.kinds && !filter.kinds.has(kinds[i]!)) continue
      if (filter.sessionId !== undefined && sids[i] !== filter.sessionId) continue
      if (filter.excludeSessionId !== undefined && sids[i] === filter.excludeSessionId) continue
      let dot = 0
      const base = i * dim
      for (let j = 0; j < dim; j++) dot += data[base + j]! * query[j]!
      if (top.length < k) {
        top.push([i, dot])
        if (top.length === k) top.sort((a, b) => b[1] - a[1])
      } else if (dot > top[k - 1]![1]) {
        let at = k - 1
        while (at > 0 && top[at - 1]![1] < dot) at--
        top.splice(at, 0, [i, dot])
        top.pop()
      }
    }
    return top.sort((a, b) => b[1] - a[1])
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
