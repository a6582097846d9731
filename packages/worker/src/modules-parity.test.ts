import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { MemoryError, openMemory, type Memory } from '@engram/core'
import { connectMemory, exposeMemory } from '@engram/worker'

let counter = 0

/** The same store, opened in process and reached through a worker host over a MessageChannel. */
const opens: [string, () => Promise<Memory>][] = [
  ['in process', () => openMemory({ appId: 'modules-parity', userId: `u${++counter}`, indexedDB: new IDBFactory(), IDBKeyRange, maxArtifactBytes: 1000 })],
  [
    'through a worker',
    async () => {
      const { port1, port2 } = new MessageChannel()
      exposeMemory({ endpoint: port1, memory: { indexedDB: new IDBFactory(), IDBKeyRange, maxArtifactBytes: 1000 }, locks: null })
      return connectMemory(port2, { appId: 'modules-parity', userId: `u${++counter}` })
    },
  ],
]

/** The code of a rejected call, checking it is a MemoryError on both sides of the boundary. */
async function codeOf(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(MemoryError)
  return (error as MemoryError).code
}

describe.each(opens)('task handles, limitations, patterns %s', (_where, open) => {
  it('cancel a task by its handle', async () => {
    const memory = await open()
    const t = await memory.tasks.create('user', { description: 'water plants', dueAt: 5 })
    expect(t.handle).toMatch(/^[0-9a-hjkmnp-tv-z]{5}$/)
    expect(await memory.tasks.cancel(`#${t.handle.toUpperCase()}`)).toBe(true)
    await memory.close()
  })

  it('store, list and resolve limitations, with their error codes', async () => {
    const memory = await open()
    expect(await memory.limitations.store({ title: 'Cannot read PDFs' })).toMatchObject({ isNew: true })
    expect(await memory.limitations.store({ title: 'cannot read pdfs' })).toMatchObject({ isNew: false })
    expect((await memory.limitations.open()).map((l) => l.title)).toEqual(['Cannot read PDFs'])
    expect(await memory.limitations.resolve('CANNOT READ PDFS')).toBe(true)
    expect(await codeOf(memory.limitations.store({ title: '' }))).toBe('invalid_input')
    expect(await codeOf(memory.limitations.store({ title: 'x'.repeat(201) }))).toBe('limit_exceeded')
    await memory.close()
    expect(await codeOf(memory.limitations.open())).toBe('closed')
  })

  it('observe and list patterns, with their error codes', async () => {
    const memory = await open()
    await memory.patterns.observe('user', 'Works late', { confidence: 0.5 })
    expect(await memory.patterns.observe('user', 'works LATE!', { confidence: 0.5 })).toMatchObject({ confidence: 0.75, observations: 2 })
    expect((await memory.patterns.list('user', { minConfidence: 0.7 })).map((p) => p.text)).toEqual(['works LATE!'])
    expect(await codeOf(memory.patterns.observe('user', 'x', { confidence: 2 }))).toBe('invalid_input')
    expect(await codeOf(memory.patterns.observe('nope', 'x'))).toBe('not_found')
    expect(await codeOf(memory.patterns.observe('user', 'x'.repeat(2001)))).toBe('limit_exceeded')
    await memory.close()
  })

  it('group projects in spaces, with their error codes', async () => {
    const memory = await open()
    await memory.spaces.create({ name: 'Work', id: 'work', sync: { enabled: true } })
    expect(await memory.projects.create({ name: 'A', id: 'a', spaceId: 'work' })).toMatchObject({ spaceId: 'work', sync: { enabled: true } })
    expect((await memory.projects.list({ spaceId: 'work' })).map((p) => p.id)).toEqual(['a'])
    expect(await memory.spaces.rename('work', 'Office')).toMatchObject({ name: 'Office' })
    expect(await codeOf(memory.spaces.delete('work'))).toBe('conflict')
    expect(await codeOf(memory.spaces.delete('none'))).toBe('not_found')
    expect(await codeOf(memory.spaces.create({ name: '' }))).toBe('invalid_input')
    await memory.close()
  })

  it('put, get, list and delete artifacts as Blobs, with their error codes', async () => {
    const memory = await open()
    const a = await memory.artifacts.put('user', { name: 'a.txt', mimeType: 'text/plain', data: new Blob(['bytes']) })
    const got = await memory.artifacts.get(a.id)
    expect(got?.data).toBeInstanceOf(Blob)
    expect(await got!.data!.text()).toBe('bytes')
    expect((await memory.artifacts.list('user')).items.map((x) => x.id)).toEqual([a.id])
    expect(await memory.artifacts.delete(a.id)).toBe(true)
    expect(await codeOf(memory.artifacts.put('user', { name: 'x', mimeType: 'nope', data: 'x' }))).toBe('invalid_input')
    expect(await codeOf(memory.artifacts.attach(a.id, new Blob(['x'])))).toBe('not_found')
    expect(await codeOf(memory.artifacts.put('user', { name: 'big', mimeType: 'text/plain', data: 'x'.repeat(1001) }))).toBe('quota_exceeded')
    await memory.close()
  })

  it('record entities and relations, read them as of a time, with their error codes', async () => {
    const memory = await open()
    const dana = await memory.entities.upsert('user', { name: 'Dana', type: 'person', aliases: ['Dee'] })
    const acme = await memory.entities.upsert('user', { name: 'Acme', type: 'organisation' })
    const initech = await memory.entities.upsert('user', { name: 'Initech', type: 'organisation' })
    await memory.relations.add('user', { subject: dana.id, predicate: 'works_at', object: acme.id, validFrom: 1_000 })
    await memory.relations.add('user', { subject: dana.id, predicate: 'works_at', object: initech.id, validFrom: 2_000 })
    expect((await memory.relations.asOf('user', dana.id, 1_500)).map((r) => r.object)).toEqual([acme.id])
    expect((await memory.relations.current('user', dana.id)).map((r) => r.object)).toEqual([initech.id])
    expect((await memory.entities.resolve('user', 'dee'))?.id).toBe(dana.id)
    expect((await memory.relations.around('user', dana.id)).entities.map((e) => e.name)).toEqual(['Dana', 'Initech'])
    expect(await memory.relations.cardinality('works at')).toBe('one')
    expect(await codeOf(memory.relations.add('user', { subject: dana.id, predicate: 'works_at', object: acme.id, validFrom: 5, validTo: 1 }))).toBe(
      'invalid_input',
    )
    expect(await codeOf(memory.relations.current('user', 'nobody'))).toBe('not_found')
    expect(await codeOf(memory.entities.merge('user', dana.id, dana.id))).toBe('invalid_input')
    await memory.close()
  })

  it('resolve people and adopt another local user, with their error codes', async () => {
    const memory = await open()
    await memory.people.link('chat:1', 'user:1')
    expect(await memory.people.resolve('chat:1')).toBe('user:1')
    expect(await memory.people.aliases('user:1')).toEqual(['chat:1'])
    expect(await memory.people.isNew('chat:1')).toBe(true)
    await memory.people.markWelcomed('chat:1')
    expect(await memory.people.isNew('user:1')).toBe(false)
    expect((await memory.sessions.create('user', { personId: 'chat:1' })).personId).toBe('user:1')
    expect(await codeOf(memory.people.link('a', 'a'))).toBe('invalid_input')
    expect(await codeOf(memory.adopt('nobody-here'))).toBe('not_found')
    expect(await codeOf(memory.adopt(memory.userId))).toBe('invalid_input')
    await memory.close()
  })
})

describe('adopt through a worker', () => {
  it("merges another user's database the host holds", async () => {
    const indexedDB = new IDBFactory()
    const connect = async (userId: string) => {
      const { port1, port2 } = new MessageChannel()
      exposeMemory({ endpoint: port1, memory: { indexedDB, IDBKeyRange }, locks: null })
      return connectMemory(port2, { appId: 'adopt-worker', userId })
    }
    const anon = await connect('anon')
    await anon.facts.set('user', 'diet', 'vegan')
    const s = await anon.sessions.create('user')
    await anon.messages.append(s.id, { role: 'user', content: 'hello' })
    await anon.close()
    const me = await connect('me')
    expect((await me.adopt('anon')).imported).toBeGreaterThan(0)
    expect((await me.facts.get('user', 'diet'))?.value).toBe('vegan')
    expect((await me.messages.tail(s.id, 5)).map((m) => m.content)).toEqual(['hello'])
    expect(await me.people.resolve('anon')).toBe('me')
    await me.close()
  })
})
