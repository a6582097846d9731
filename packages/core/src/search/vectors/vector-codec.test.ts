import { describe, expect, it } from 'vitest'
import { decodeVectorInto, encodeVector } from './vector-codec.js'
import { normalize } from './vector-topk.js'

const random = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1

describe('vector codec', () => {
  it('stores a unit vector as int8 a quarter the size, each component within half a step', () => {
    const next = random(7)
    const unit = normalize(Float32Array.from({ length: 512 }, next))
    const stored = encodeVector(unit, 'int8')
    expect(stored.vector).toBeInstanceOf(Int8Array)
    expect(stored.vector.byteLength).toBe(unit.byteLength / 4)
    const back = new Float32Array(512)
    decodeVectorInto(stored, back, 0)
    for (let i = 0; i < 512; i++) expect(Math.abs(back[i]! - unit[i]!)).toBeLessThanOrEqual(stored.scale! / 2 + 1e-7)
    const cos = back.reduce((s, x, i) => s + x * unit[i]!, 0) / Math.hypot(...back)
    expect(cos).toBeGreaterThan(0.9999)
  })

  it('keeps float32 as given, and decodes rows written before int8', () => {
    const unit = normalize(Float32Array.from([3, 4]))
    expect(encodeVector(unit, 'float32')).toEqual({ vector: unit })
    const out = new Float32Array(4)
    decodeVectorInto({ vector: unit }, out, 2)
    expect([...out]).toEqual([0, 0, unit[0], unit[1]])
  })
})
