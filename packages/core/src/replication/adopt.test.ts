import { Dexie } from 'dexie'
import { describe, expect, it } from 'vitest'
import { databaseName, openMemory, type Memory } from '@engram/core'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { testClock } from '../../../../test/support/memory.js'

/** Two users' stores of one app on one device (one IndexedDB), with their own clocks. */
async function device() {
  const indexedDB = new IDBFactory()
  const clock = testClock(Date.UTC(2026, 6, 1))
  const open = (userId: string) => openMemory({ appId: 'app', userId, indexedDB, IDBKeyRange, now: clock.now })
  return { indexedDB, clock, open }
}

async function seedAnonymous(anon: Memory) {
  await anon.projects.create({ id: 'trip', name: 'Trip' })
  await anon.facts.set('user', 'diet', 'vegan')
  await anon.facts.set('trip', 'city', 'Rome')
  const s = await anon.sessions.create('trip', { title: 'planning' })
  await anon.messages.appendExchange(s.id, 'Where should I go?', 'Rome is lovely.')
  await anon.journal.append(s.id, { kind: 'note', payload: { n: 1 } })
  await anon.tasks.create('trip', { description: 'book flights', dueAt: 5 })
  await anon.patterns.observe('user', 'Plans trips at night', { confidence: 0.8 })
  await anon.artifacts.put('trip', { name: 'itinerary.md', mimeType: 'text/markdown', data: '# Day 1' })
  return s
}

describe('adopt', () => {
  it("merges another local user's memory: kept kinds kept, facts by latest clock, alias recorded", async () => {
    const { indexedDB, clock, open } = await device()
    const anon = await open('anon-1')
    const s = await seedAnonymous(anon)
    clock.advance(1000)
    const me = await open('u1')
    await me.facts.set('user', 'diet', 'vegetarian') // newer than the anonymous 'vegan'
    clock.advance(1000)
    await anon.facts.set('user', 'name', 'Ada') // newest of all
    const result = await me.adopt('anon-1')
    expect(result.imported).toBeGreaterThan(0)
    expect(result.merged).toBeGreaterThan(0)
    expect((await me.facts.get('user', 'diet'))?.value).toBe('vegetarian')
    expect((await me.facts.get('user', 'name'))?.value).toBe('Ada')
    expect((await me.facts.get('trip', 'city'))?.value).toBe('Rome')
    expect((await me.messages.tail(s.id, 10)).map((m) => m.content)).toEqual(['Where should I go?', 'Rome is lovely.'])
    // Stored as appends are (no stamp of their own), the adopted rows' session holds their highest stamp for the clock restore.
    const raw = await new Dexie(databaseName('app', 'u1'), { indexedDB, IDBKeyRange }).open()
    const rows = await raw.table('messages').where('sessionId').equals(s.id).toArray()
    expect(rows.map((r) => r.hlc)).toEqual([undefined, undefined])
    expect((await raw.table('sessions').get(s.id)).lastAt).toBe(
      rows
        .map((r) => r.at)
        .sort()
        .at(-1),
    )
    raw.close()
    expect((await me.journal.load(s.id)).records.map((r) => r.kind)).toEqual(['note'])
    expect((await me.tasks.list({ projectId: 'trip' })).items.map((t) => t.description)).toEqual(['book flights'])
    expect((await me.patterns.list('user')).map((p) => p.text)).toEqual(['Plans trips at night'])
    const [artifact] = (await me.artifacts.list('trip')).items
    expect(await (await me.artifacts.get(artifact!.id))!.data!.text()).toBe('# Day 1')
    expect((await me.search('trip', 'Rome')).length).toBeGreaterThan(0)
    expect(await me.people.resolve('anon-1')).toBe('u1')
    expect(await me.people.aliases('u1')).toEqual(['anon-1'])
    // the old database is left as it was, and readable
    expect((await anon.facts.get('user', 'diet'))?.value).toBe('vegan')
    // idempotent: a second run changes nothing
    const before = await me.export()
    expect((await me.adopt('anon-1')).merged).toBe(0)
    const after = await me.export()
    expect({ ...after, exportedAt: 0 }).toEqual({ ...before, exportedAt: 0 })
  })

  it('refuses its own user, an unknown database, a bad id and an alias cycle, writing nothing', async () => {
    const { open, indexedDB } = await device()
    const me = await open('u1')
    await expect(me.adopt('u1')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(me.adopt('')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(me.adopt(7 as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(me.adopt('never-opened')).rejects.toMatchObject({ code: 'not_found' })
    expect((await indexedDB.databases()).map((d) => d.name)).not.toContain('engram:app:never-opened')
    const anon = await open('anon-2')
    await anon.facts.set('user', 'k', 'v')
    await me.people.link('u1', 'anon-2') // this user is already an alias of the other
    await expect(me.adopt('anon-2')).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await me.facts.get('user', 'k')).toBeUndefined()
  })

  it('an adoption that fails part-way writes nothing, and the next run does all of it', async () => {
    const { open, indexedDB, clock } = await device()
    const anon = await open('anon-3')
    const s = await seedAnonymous(anon)
    // a budget too small for the anonymous artifact fails the adoption after everything else was written in its transaction
    const tight = await openMemory({ appId: 'app', userId: 'u3', indexedDB, IDBKeyRange, now: clock.now, maxArtifactBytes: 3 })
    const empty = await tight.export()
    await expect(tight.adopt('anon-3')).rejects.toMatchObject({ code: 'quota_exceeded' })
    expect({ ...(await tight.export()), exportedAt: 0 }).toEqual({ ...empty, exportedAt: 0 })
    expect(await tight.people.resolve('anon-3')).toBe('anon-3')
    await tight.close()
    const me = await openMemory({ appId: 'app', userId: 'u3', indexedDB, IDBKeyRange, now: clock.now })
    await me.adopt('anon-3')
    expect(await me.messages.tail(s.id, 10)).toHaveLength(2)
    expect(await me.people.resolve('anon-3')).toBe('u3')
  })
})
