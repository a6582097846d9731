/*
 * How a vector is stored: a unit vector's components as int8 with one scale
 * (the largest component maps to ±127), a quarter of the bytes of a
 * Float32Array. Cosine ranking on the decoded vectors moves by the rounding
 * only (docs/search-and-context.md gives the recall cost measured).
 */
import type { VectorRow } from '../index/index-rows.js'

/** The stored form of a unit vector at `precision`. */
export function encodeVector(unit: Float32Array, precision: 'int8' | 'float32'): Pick<VectorRow, 'vector' | 'scale'> {
  if (precision === 'float32') return { vector: unit }
  let max = 0
  for (const x of unit) max = Math.max(max, Math.abs(x))
  const scale = max > 0 ? max / 127 : 1
  const q = new Int8Array(unit.length)
  for (let i = 0; i < unit.length; i++) q[i] = Math.round(unit[i]! / scale)
  return { vector: q, scale }
}

/** Writes a stored vector's components into `out` at `offset` (as floats). */
export function decodeVectorInto(row: Pick<VectorRow, 'vector' | 'scale'>, out: Float32Array, offset: number): void {
  const v = row.vector
  if (v instanceof Float32Array) {
    out.set(v, offset)
    return
  }
  const scale = row.scale ?? 1
  for (let i = 0; i < v.length; i++) out[offset + i] = v[i]! * scale
}
