import { describe, expect, it } from 'vitest'
import * as Y from 'yjs'
import * as awarenessProtocol from 'y-protocols/awareness'
import { encodeAwarenessFrames, readAwarenessEntries } from './awareness-frames.js'

const awarenessWith = (clients: number, bytes: number): awarenessProtocol.Awareness => {
  const source = new awarenessProtocol.Awareness(new Y.Doc())
  source.setLocalState(null)
  const target = new awarenessProtocol.Awareness(new Y.Doc())
  target.setLocalState(null)
  for (let i = 0; i < clients; i++) {
    const one = new awarenessProtocol.Awareness(new Y.Doc())
    one.setLocalState({ v: 'x'.repeat(bytes) })
    awarenessProtocol.applyAwarenessUpdate(target, awarenessProtocol.encodeAwarenessUpdate(one, [one.clientID]), null)
    one.destroy()
  }
  return target
}

describe('awareness budget', () => {
  it('reads each state size without applying the update', () => {
    const a = new awarenessProtocol.Awareness(new Y.Doc())
    a.setLocalState({ name: 'ann' })
    expect(readAwarenessEntries(awarenessProtocol.encodeAwarenessUpdate(a, [a.clientID]))).toEqual([{ client: a.clientID, bytes: '{"name":"ann"}'.length }])
  })

  it('splits states into frames under the limit and leaves out a state no frame can hold', () => {
    const awareness = awarenessWith(10, 300)
    const clients = Array.from(awareness.getStates().keys())
    const frames = encodeAwarenessFrames(awareness, clients, 1000)
    expect(frames.length).toBeGreaterThan(3)
    for (const f of frames) expect(f.byteLength).toBeLessThanOrEqual(1000)
    const huge = awarenessWith(1, 2000)
    expect(encodeAwarenessFrames(huge, Array.from(huge.getStates().keys()), 1000)).toEqual([])
  })
})
