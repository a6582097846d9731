import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalRoomName, MAX_ROOM_NAME_LENGTH, roomName, roomOwnerKey, roomPath } from './room-name.js'
import { decodeMuxFrame, encodeMuxFrame, type MuxFrame } from './mux-frames.js'

/** Well-formed strings of every character class: ASCII (with `/`, `%`, controls), the BMP, astral planes. */
const id = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((s) => s.length > 0)
const seed = Number(process.env.FC_SEED ?? 28)

describe('room names', () => {
  it('keeps an encoded / inside its segment: project a / session b/c and project a/b / session c are two rooms', () => {
    expect(roomName('u', 'a', 'b/c')).toBe('u/a/b%2Fc')
    expect(roomName('u', 'a/b', 'c')).toBe('u/a%2Fb/c')
    expect(roomPath('u/a/b%2Fc')).toEqual(['u', 'a', 'b/c'])
    expect(roomPath('u/a%2Fb/c')).toEqual(['u', 'a/b', 'c'])
    expect(roomName('u', '%2F')).toBe('u/%252F')
    expect(roomOwnerKey(roomName('a/b', 'p'))).toBe('a%2Fb')
  })

  it('reads every spelling of one name as one canonical room, and refuses what is not a name', () => {
    expect(canonicalRoomName('u1/%61')).toBe('u1/a')
    expect(canonicalRoomName('u1/my project')).toBe('u1/my%20project')
    expect(canonicalRoomName('u1//a')).toBeNull()
    expect(canonicalRoomName('')).toBeNull()
    expect(canonicalRoomName('u1/%E0%A4%A')).toBeNull()
    expect(canonicalRoomName('u1/%ED%A0%80')).toBeNull() // a lone surrogate in UTF-8 does not decode
    expect(canonicalRoomName('u1/a%00b')).toBeNull()
    expect(canonicalRoomName(`u1/${'x'.repeat(MAX_ROOM_NAME_LENGTH)}`)).toBeNull()
  })

  it(`round-trips and never maps two paths to one room, for every character class (seed ${seed})`, () => {
    fc.assert(
      fc.property(fc.array(id, { minLength: 2, maxLength: 3 }), fc.array(id, { minLength: 2, maxLength: 3 }), (a, b) => {
        const hasControl = (s: string[]) => s.some((x) => [...x].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
        const ra = roomName(...a)
        if (!hasControl(a)) {
          expect(roomPath(ra)).toEqual(a)
          expect(canonicalRoomName(ra) ?? ra).toBe(ra)
        }
        if (a.join('\u0000') !== b.join('\u0000')) expect(roomName(...b)).not.toBe(ra)
      }),
      { seed, numRuns: 2000 },
    )
  })
})

describe('mux frames', () => {
  const frames: MuxFrame[] = [
    { type: 'open', room: 'u/a%2Fb/c' },
    { type: 'close', room: 'u/p' },
    { type: 'message', room: 'u/p', message: new Uint8Array([0, 1, 2, 255]) },
    { type: 'refused', room: 'u/p', code: 4405, reason: 'roomQuotaExceeded' },
    { type: 'time', time: 1_764_806_400_000 },
    { type: 'ping' },
    { type: 'drop', room: 'u/p/s' },
    { type: 'dropped', room: 'u/p/s', code: 0 },
  ]
  it.each(frames.map((f) => [f.type, f] as const))('%s round-trips', (_type, frame) => {
    expect(decodeMuxFrame(encodeMuxFrame(frame))).toEqual(frame)
  })
  it('refuses unknown types, truncated frames and trailing bytes', () => {
    expect(() => decodeMuxFrame(new Uint8Array([42]))).toThrow(/unknown/)
    const open = encodeMuxFrame({ type: 'open', room: 'u/p' })
    expect(() => decodeMuxFrame(open.slice(0, 2))).toThrow()
    expect(() => decodeMuxFrame(new Uint8Array([...open, 0]))).toThrow(/trailing/)
  })
})
