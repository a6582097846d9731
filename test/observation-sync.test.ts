import 'fake-indexeddb/auto'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { type BackgroundExtractor, type Memory, openMemory } from '@engram/core'
import { createLoopbackNetwork, startSync } from '@engram/sync'
import { settle, track } from './support/loopback-sync.js'

/*
 * Observations through the real sync engine (Yjs documents over the in-process loopback
 * network): the device that observed a long session and a second device of the same user both
 * find them in search, and once a reflection condenses them, neither finds the condensed ones.
 */

let counter = 0
/** Notes that name a word no message holds ("quokka"); reflections keep it and add "marmalade". */
const observer: BackgroundExtractor = {
  extract: async () => [],
  observe: async (input) => ({
    observations: [{ text: `Observed ${input.messages.length} messages: quokka sightings on the night train.`, priority: 'high' }],
  }),
  reflect: async (input) => ({ observations: [{ text: `Condensed ${input.observations.length} notes: marmalade and quokka.`, priority: 'medium' }] }),
  settings: { observeTokens: 10, reflectTokens: 12 },
}

const observationIds = async (m: Memory, word: string) =>
  (await m.search('p', word, { mode: 'text', limit: 50 }))
    .filter((h) => h.kind === 'observation')
    .map((h) => h.id)
    .sort()

describe('observations across devices', () => {
  it('are found on the other device; those a reflection condensed leave its search too', async () => {
    const network = createLoopbackNetwork()
    const user = `o${++counter}`
    const device = () => ({ appId: 'observation-sync', userId: user, indexedDB: new IDBFactory(), IDBKeyRange })
    const laptop = track(await openMemory({ ...device(), extractor: observer }))
    const phone = track(await openMemory(device()))
    for (const m of [laptop, phone]) await m.projects.create({ id: 'p', name: 'P', sync: { enabled: true, messages: true } })
    const syncs = [laptop, phone].map((m, i) =>
      track(startSync(m, { connect: network.connector(`d${i}`), docName: (p) => `observations-${counter}:d${i}:${p}`, onError: () => {} })),
    )
    await Promise.all([laptop, phone].map((m) => m.sync.whenSynced('p')))

    const session = await laptop.sessions.create('p')
    const turn = async (i: number) => {
      await laptop.turns.begin('p', { sessionId: session.id, turnId: `t${i}`, prompt: `Turn ${i}: the night train to Vienna leaves at nine.`, budget: 500 })
      await laptop.turns.end({ sessionId: session.id, turnId: `t${i}`, reply: 'Noted.' })
    }
    await turn(0)
    await turn(1)
    await laptop.extraction.flush()
    await settle(network, syncs)
    // Every observation in force names "quokka", condensed or not.
    const first = (await laptop.observations.list(session.id)).map((o) => o.id).sort()
    expect(first.length).toBeGreaterThan(0)
    expect(await observationIds(phone, 'quokka')).toEqual(first)
    const [hit] = (await phone.search('p', 'quokka', { mode: 'text', kinds: ['observation'] })).filter((h) => h.id === first[0])
    expect(hit).toMatchObject({ kind: 'observation', sessionId: session.id })

    for (let i = 2; i < 8; i++) await turn(i)
    await laptop.extraction.flush()
    await settle(network, syncs)
    const all = await laptop.observations.list(session.id, { all: true })
    const superseded = all.filter((o) => o.supersededAt !== undefined).map((o) => o.id)
    // Each observation that takes the notes past 12 tokens is followed by a reflection.
    expect(superseded.length).toBeGreaterThan(0)
    const active = new Set((await laptop.observations.list(session.id)).map((o) => o.id))
    for (const word of ['quokka', 'marmalade']) {
      const expected = all
        .filter((o) => active.has(o.id) && o.text.includes(word))
        .map((o) => o.id)
        .sort()
      for (const m of [laptop, phone]) {
        const ids = await observationIds(m, word)
        expect(ids).toEqual(expected)
        for (const id of superseded) expect(ids).not.toContain(id)
      }
    }
  })
})
