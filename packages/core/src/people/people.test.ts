import { describe, expect, it } from 'vitest'
import { createMemory, peopleModule, type Change } from '@engram/core'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { openTestMemory } from '../../../../test/support/memory.js'

describe('people', () => {
  it('resolves aliases to their canonical id, through chains', async () => {
    const memory = await openTestMemory()
    expect(await memory.people.resolve('web:abc')).toBe('web:abc')
    await memory.people.link('email:ada@example.com', 'user:42')
    await memory.people.link('web:abc', 'email:ada@example.com') // linked to the canonical id of its target
    expect(await memory.people.resolve('web:abc')).toBe('user:42')
    expect(await memory.people.aliases('user:42')).toEqual(['email:ada@example.com', 'web:abc'])
    // the canonical id itself becomes an alias: its aliases follow it
    await memory.people.link('user:42', 'account:7')
    for (const id of ['web:abc', 'email:ada@example.com', 'user:42']) expect(await memory.people.resolve(id)).toBe('account:7')
    expect(await memory.people.aliases('account:7')).toEqual(['email:ada@example.com', 'user:42', 'web:abc'])
    expect(await memory.people.aliases('nobody')).toEqual([])
  })

  it('refuses self-links and cycles with invalid_input, writing nothing', async () => {
    const memory = await openTestMemory()
    const seen: Change[] = []
    await memory.changes.subscribe({ kinds: ['people'] }, (batch) => void seen.push(...batch))
    await expect(memory.people.link('a', 'a')).rejects.toMatchObject({ code: 'invalid_input' })
    await memory.people.link('a', 'b')
    await memory.people.link('b', 'c')
    await expect(memory.people.link('c', 'a')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.people.link('c', 'b')).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await memory.people.resolve('c')).toBe('c')
    for (const bad of ['', ' x', 5, null]) {
      await expect(memory.people.link(bad as never, 'z')).rejects.toMatchObject({ code: 'invalid_input' })
      await expect(memory.people.link('z', bad as never)).rejects.toMatchObject({ code: 'invalid_input' })
      await expect(memory.people.resolve(bad as never)).rejects.toMatchObject({ code: 'invalid_input' })
      await expect(memory.people.isNew(bad as never)).rejects.toMatchObject({ code: 'invalid_input' })
      await expect(memory.people.markWelcomed(bad as never)).rejects.toMatchObject({ code: 'invalid_input' })
      await expect(memory.people.aliases(bad as never)).rejects.toMatchObject({ code: 'invalid_input' })
    }
    expect(seen.map((c) => c.id).sort()).toEqual(['a', 'b', 'b', 'c'].sort())
  })

  it('knows who was welcomed, across aliases', async () => {
    const memory = await openTestMemory()
    expect(await memory.people.isNew('web:1')).toBe(true)
    await memory.people.markWelcomed('web:1')
    await memory.people.markWelcomed('web:1')
    expect(await memory.people.isNew('web:1')).toBe(false)
    // linking a welcomed alias to a new canonical id carries the welcome over
    await memory.people.link('web:1', 'user:1')
    expect(await memory.people.isNew('user:1')).toBe(false)
    expect(await memory.people.isNew('email:x')).toBe(true)
    await memory.people.link('email:x', 'user:1')
    expect(await memory.people.isNew('email:x')).toBe(false)
  })

  it('stores sessions and messages with the resolved person id', async () => {
    const memory = await openTestMemory()
    await memory.projects.create({ id: 'p', name: 'P' })
    await memory.people.link('chat:99', 'user:1')
    const s = await memory.sessions.create('p', { personId: 'chat:99' })
    expect(s.personId).toBe('user:1')
    const m = await memory.messages.append(s.id, { role: 'user', content: 'hi', personId: 'chat:99' })
    expect(m.personId).toBe('user:1')
    expect((await memory.messages.tail(s.id, 1))[0]!.personId).toBe('user:1')
    const plain = await memory.messages.append(s.id, { role: 'assistant', content: 'hello' })
    expect(plain).not.toHaveProperty('personId')
    await expect(memory.sessions.create('p', { personId: '' })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.messages.append(s.id, { role: 'user', content: 'x', personId: 3 } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    expect((await memory.messages.tail(s.id, 10)).length).toBe(2)
  })

  it('is one identity model with the person entities of the user project, both ways', async () => {
    const memory = await openTestMemory()
    await memory.people.link('email:ada@example.com', 'user:42')
    // Each id is a person entity; the alias's entity was merged into the canonical one.
    const ada = await memory.entities.resolve('user', 'email:ada@example.com', { type: 'person' })
    expect(ada).toMatchObject({ name: 'user:42', type: 'person', aliases: ['email:ada@example.com'] })
    // What the agent learns of the person hangs on the one entity.
    const acme = await memory.entities.upsert('user', { name: 'Acme', type: 'organisation' })
    await memory.relations.add('user', { subject: ada!.id, predicate: 'works_at', object: acme.id })
    // Merging two person entities links their ids.
    const web = await memory.entities.upsert('user', { name: 'web:abc', type: 'person', observations: ['Signed in from the web'] })
    await memory.entities.merge('user', web.id, ada!.id)
    expect(await memory.people.resolve('web:abc')).toBe('user:42')
    expect(await memory.people.aliases('user:42')).toEqual(['email:ada@example.com', 'web:abc'])
    expect((await memory.entities.resolve('user', 'web:abc'))?.observations).toEqual(['Signed in from the web'])
    expect((await memory.relations.current('user', web.id)).map((r) => r.object)).toEqual([acme.id])
  })

  it('is a module of its own, in whole-store dumps', async () => {
    const memory = await createMemory({ appId: 'a', userId: 'people-module', indexedDB: new IDBFactory(), IDBKeyRange, modules: [peopleModule()] })
    await memory.people.link('x', 'y')
    const dump = await memory.export()
    expect(dump.tables.people).toHaveLength(2)
    const other = await openTestMemory()
    await other.import(dump, { mode: 'merge' })
    expect(await other.people.resolve('x')).toBe('y')
    await memory.close()
    await expect(memory.people.resolve('x')).rejects.toMatchObject({ code: 'closed' })
    await expect(memory.adopt('someone')).rejects.toMatchObject({ code: 'closed' })
  })
})
