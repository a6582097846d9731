import type { HitKind } from '../search.js'
import type { ProjectVectors } from './vector-cache.js'

/* The query side of vector search: loaded with search, not with the store. */

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

/** Exact cosine top-k: `[docIndex, similarity]` pairs, best first. */
export function topK(pv: ProjectVectors, query: Float32Array, k: number, filter: VectorFilter): Array<[number, number]> {
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
