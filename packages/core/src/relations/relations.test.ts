import { describe, expect, it } from 'vitest'
import { type Change, createMemory, knowledgeModule } from '@engram/core'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

const MARCH = Date.UTC(2026, 2, 1)
const MAY = Date.UTC(2026, 4, 1)
const JUNE = Date.UTC(2026, 5, 1)
const JULY = Date.UTC(2026, 6, 1)

async function open(now = JULY) {
  const clock = testClock(now)
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ id: 'p', name: 'P' })
  return { memory, clock }
}

describe('relations', () => {
  it('closes the current relation of a single-valued predicate at the new one’s validFrom, keeping it', async () => {
    const { memory } = await open()
    const dana = await memory.entities.upsert('p', { name: 'Dana', type: 'person' })
    const acme = await memory.entities.upsert('p', { name: 'Acme', type: 'organisation' })
    const initech = await memory.entities.upsert('p', { name: 'Initech', type: 'organisation' })
    const first = await memory.relations.add('p', { subject: dana.id, predicate: 'works_at', object: acme.id, validFrom: MARCH })
    expect(first.validTo).toBeUndefined()
    const second = await memory.relations.add('p', { subject: dana.id, predicate: 'works_at', object: initech.id, validFrom: JUNE })
    expect((await memory.relations.current('p', dana.id)).map((r) => r.object)).toEqual([initech.id])
    expect((await memory.relations.asOf('p', dana.id, MAY)).map((r) => r.object)).toEqual([acme.id])
    expect(await memory.relations.asOf('p', dana.id, Date.UTC(2026, 0, 1))).toEqual([])
    const history = await memory.relations.history('p', dana.id, 'Works at')
    expect(history.map((r) => [r.object, r.validFrom, r.validTo, r.closedBy])).toEqual([
      [acme.id, MARCH, JUNE, second.id],
      [initech.id, JUNE, undefined, undefined],
    ])
    // Acme sees Dana among its relations in May, not now.
    expect((await memory.relations.asOf('p', acme.id, MAY, { direction: 'in' })).map((r) => r.subject)).toEqual([dana.id])
    expect(await memory.relations.current('p', acme.id)).toEqual([])
    // Deleting the newer assertion reopens the older one.
    expect(await memory.relations.delete('p', second.id)).toBe(true)
    expect((await memory.relations.current('p', dana.id)).map((r) => r.object)).toEqual([acme.id])
    expect(await memory.relations.delete('p', second.id)).toBe(false)
  })

  it('accumulates multi-valued predicates and returns an assertion already true', async () => {
    const { memory } = await open()
    const dana = await memory.entities.upsert('p', { name: 'Dana', type: 'person' })
    const a = await memory.relations.add('p', { subject: dana.id, predicate: 'likes', value: 'climbing', validFrom: MARCH })
    const b = await memory.relations.add('p', { subject: dana.id, predicate: 'likes', value: 'tea', validFrom: JUNE })
    expect(await memory.relations.add('p', { subject: dana.id, predicate: 'likes', value: 'climbing' })).toEqual(a)
    expect((await memory.relations.current('p', dana.id)).map((r) => r.value).sort()).toEqual(['climbing', 'tea'])
    expect(await memory.relations.cardinality('likes')).toBe('many')
    expect(await memory.relations.cardinality('Lives in')).toBe('one')
    const ended = await memory.relations.end('p', b.id, JUNE + 1000)
    expect(ended.validTo).toBe(JUNE + 1000)
    expect((await memory.relations.current('p', dana.id)).map((r) => r.value)).toEqual(['climbing'])
    await expect(memory.relations.end('p', b.id, MARCH)).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('walks a bounded neighbourhood, as of a time', async () => {
    const { memory } = await open()
    const names = ['Dana', 'Acme', 'Berlin', 'Germany', 'Initech']
    const [dana, acme, berlin, germany, initech] = await Promise.all(names.map((name) => memory.entities.upsert('p', { name, type: 'thing' })))
    await memory.relations.addMany('p', [
      { subject: dana!.id, predicate: 'works_at', object: acme!.id, validFrom: MARCH },
      { subject: acme!.id, predicate: 'based_in', object: berlin!.id, validFrom: MARCH },
      { subject: berlin!.id, predicate: 'capital_of', object: germany!.id, validFrom: 0 },
      { subject: dana!.id, predicate: 'works_at', object: initech!.id, validFrom: JUNE },
    ])
    const one = await memory.relations.around('p', dana!.id)
    expect(one.entities.map((e) => e.name)).toEqual(['Dana', 'Initech'])
    const may = await memory.relations.around('p', dana!.id, { depth: 2, asOf: MAY })
    expect(may.entities.map((e) => e.name)).toEqual(['Dana', 'Acme', 'Berlin'])
    const deep = await memory.relations.around('p', dana!.id, { depth: 3, asOf: MAY })
    expect(deep.entities.map((e) => e.name)).toEqual(['Dana', 'Acme', 'Berlin', 'Germany'])
    expect((await memory.relations.around('p', dana!.id, { depth: 3, asOf: MAY, limit: 2 })).relations).toHaveLength(2)
    await expect(memory.relations.around('p', dana!.id, { depth: 9 })).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('refuses bad input with a code, writing nothing', async () => {
    const { memory } = await open()
    const seen: Change[] = []
    await memory.changes.subscribe({ kinds: ['entities', 'relations'] }, (batch) => void seen.push(...batch))
    const dana = await memory.entities.upsert('p', { name: 'Dana', type: 'person' })
    const acme = await memory.entities.upsert('p', { name: 'Acme', type: 'organisation' })
    const bad: unknown[] = [
      { subject: dana.id, predicate: 'works_at' },
      { subject: dana.id, predicate: 'works_at', object: acme.id, value: 'x' },
      { subject: dana.id, predicate: '  ', object: acme.id },
      { subject: dana.id, predicate: '!!', object: acme.id },
      { subject: dana.id, predicate: 'works_at', object: acme.id, validFrom: JUNE, validTo: MARCH },
      { subject: dana.id, predicate: 'works_at', object: acme.id, confidence: 2 },
      { subject: dana.id, predicate: 'works_at', object: acme.id, colour: 'red' },
      { subject: dana.id, predicate: 'likes', value: { nested: true } },
      { subject: dana.id, predicate: 'knows', object: dana.id },
      null,
    ]
    for (const input of bad) await expect(memory.relations.add('p', input as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.relations.add('p', { subject: 'nobody', predicate: 'works_at', object: acme.id })).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.relations.add('nope', { subject: dana.id, predicate: 'works_at', object: acme.id })).rejects.toMatchObject({ code: 'not_found' })
    // One bad input in a batch writes none of it.
    await expect(
      memory.relations.addMany('p', [
        { subject: dana.id, predicate: 'works_at', object: acme.id },
        { subject: dana.id, predicate: 'works_at', object: 'ghost' },
      ]),
    ).rejects.toMatchObject({ code: 'not_found' })
    for (const input of [{ name: '', type: 'person' }, { name: '...', type: 'person' }, { name: 'A', type: '' }, { name: 'A', type: 'x', extra: 1 }, 'Dana'])
      await expect(memory.entities.upsert('p', input as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.entities.upsert('p', { name: 'x'.repeat(201), type: 'person' })).rejects.toMatchObject({ code: 'limit_exceeded' })
    await expect(memory.entities.merge('p', dana.id, dana.id)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.relations.current('p', 'ghost')).rejects.toMatchObject({ code: 'not_found' })
    expect(await memory.relations.list('p')).toEqual([])
    expect(seen.map((c) => c.kind)).toEqual(['entities', 'entities'])
  })
})

describe('entities', () => {
  it('resolves by name or alias, case and accents ignored', async () => {
    const { memory } = await open()
    const dana = await memory.entities.upsert('p', { name: 'Dána Smith', type: 'person', aliases: ['D.S.'], observations: ['Climbs on weekends'] })
    expect((await memory.entities.resolve('p', 'dana smith'))?.id).toBe(dana.id)
    expect((await memory.entities.resolve('p', 'd s'))?.id).toBe(dana.id)
    expect((await memory.entities.resolve('p', 'DANA  SMITH', { type: 'Person' }))?.id).toBe(dana.id)
    expect(await memory.entities.resolve('p', 'dana smith', { type: 'place' })).toBeUndefined()
    // Upserting the same name adds, never removes.
    const again = await memory.entities.upsert('p', { name: 'dana smith', type: 'person', observations: ['Drinks tea'] })
    expect(again.id).toBe(dana.id)
    expect(again.observations).toEqual(['Climbs on weekends', 'Drinks tea'])
    expect(await memory.entities.addObservations('p', dana.id, ['Drinks tea', 'Moved to Lyon'])).toEqual(['Moved to Lyon'])
    expect(await memory.entities.removeObservations('p', dana.id, ['Climbs on weekends', 'never said'])).toEqual(['Climbs on weekends'])
    expect((await memory.entities.get('p', dana.id))?.observations).toEqual(['Drinks tea', 'Moved to Lyon'])
    const other = await memory.entities.upsert('p', { name: 'Sam', type: 'person' })
    await expect(memory.entities.addAliases('p', other.id, ['Dana Smith'])).rejects.toMatchObject({ code: 'conflict' })
    expect((await memory.entities.list('p', { type: 'person' })).map((e) => e.name)).toEqual(['Dána Smith', 'Sam'])
  })

  it('merges one entity into another: names, observations and relations move, cycles are refused', async () => {
    const { memory } = await open()
    const dana = await memory.entities.upsert('p', { name: 'Dana', type: 'person', observations: ['Likes tea'] })
    const dee = await memory.entities.upsert('p', { name: 'Dee', type: 'person', observations: ['Plays chess'] })
    const acme = await memory.entities.upsert('p', { name: 'Acme', type: 'organisation' })
    await memory.relations.add('p', { subject: dee.id, predicate: 'works_at', object: acme.id, validFrom: MARCH })
    await memory.relations.add('p', { subject: dee.id, predicate: 'knows', object: dana.id, validFrom: MARCH })
    const merged = await memory.entities.merge('p', dee.id, dana.id)
    expect(merged.aliases).toEqual(['Dee'])
    expect(merged.observations).toEqual(['Likes tea', 'Plays chess'])
    expect((await memory.entities.get('p', dee.id))?.mergedInto).toBe(dana.id)
    expect((await memory.entities.resolve('p', 'dee'))?.id).toBe(dana.id)
    const current = await memory.relations.current('p', dana.id)
    expect(current.map((r) => [r.subject, r.predicate, r.object])).toEqual([[dana.id, 'works_at', acme.id]])
    // Through the merged id too.
    expect((await memory.relations.current('p', dee.id)).map((r) => r.object)).toEqual([acme.id])
    await expect(memory.entities.merge('p', dana.id, dee.id)).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await memory.entities.delete('p', dana.id)).toBe(true)
    expect(await memory.relations.list('p')).toEqual([])
    expect(await memory.entities.resolve('p', 'dee')).toBeUndefined()
  })

  it('is found by search, as entities and as relations in words', async () => {
    const { memory } = await open()
    const dana = await memory.entities.upsert('p', { name: 'Dana', type: 'person', observations: ['Enjoys bouldering'] })
    const initech = await memory.entities.upsert('p', { name: 'Initech', type: 'organisation' })
    await memory.relations.add('p', { subject: dana.id, predicate: 'works_at', object: initech.id, validFrom: JUNE })
    const hits = await memory.search('p', 'bouldering')
    expect(hits.map((h) => [h.kind, h.id])).toEqual([['entity', dana.id]])
    const rel = await memory.search('p', 'works initech', { kinds: ['relation'] })
    expect(rel.map((h) => h.text)).toEqual(['Dana works at Initech'])
    await memory.entities.delete('p', dana.id)
    expect(await memory.search('p', 'bouldering')).toEqual([])
  })

  it('travels in dumps and works as a module of its own', async () => {
    const memory = await createMemory({ appId: 'a', userId: 'knowledge-module', indexedDB: new IDBFactory(), IDBKeyRange, modules: [knowledgeModule()] })
    await memory.projects.create({ id: 'p', name: 'P' })
    const dana = await memory.entities.upsert('p', { name: 'Dana', type: 'person' })
    const acme = await memory.entities.upsert('p', { name: 'Acme', type: 'organisation' })
    const initech = await memory.entities.upsert('p', { name: 'Initech', type: 'organisation' })
    await memory.relations.add('p', { subject: dana.id, predicate: 'works_at', object: acme.id, validFrom: MARCH })
    await memory.relations.add('p', { subject: dana.id, predicate: 'works_at', object: initech.id, validFrom: JUNE })
    const dump = await memory.export('p')
    expect(dump.tables.entities).toHaveLength(3)
    expect(dump.tables.relations).toHaveLength(2)
    // A dump written by hand carries no derived windows or name keys: the import derives them.
    for (const r of dump.tables.relations as Record<string, unknown>[]) {
      delete r.closedAt
      delete r.closedBy
    }
    for (const e of dump.tables.entities as Record<string, unknown>[]) e.nameKeys = []
    const other = await openTestMemory()
    await other.import(dump, { mode: 'merge' })
    expect((await other.relations.asOf('p', dana.id, MAY)).map((r) => r.object)).toEqual([acme.id])
    expect((await other.relations.current('p', dana.id)).map((r) => r.object)).toEqual([initech.id])
    expect((await other.entities.resolve('p', 'dana'))?.id).toBe(dana.id)
    expect((await other.search('p', 'initech', { kinds: ['relation'] })).map((h) => h.text)).toEqual(['Dana works at Initech'])
    await memory.close()
    await expect(memory.entities.resolve('p', 'Dana')).rejects.toMatchObject({ code: 'closed' })
    await expect(memory.relations.current('p', dana.id)).rejects.toMatchObject({ code: 'closed' })
  })

  it('takes the app’s predicate declarations, and derives stored windows again when they change', async () => {
    const indexedDB = new IDBFactory()
    const opts = { appId: 'a', userId: 'predicates', indexedDB, IDBKeyRange, now: () => JULY }
    const first = await createMemory({ ...opts, modules: [knowledgeModule()] })
    await first.projects.create({ id: 'p', name: 'P' })
    const dana = await first.entities.upsert('p', { name: 'Dana', type: 'person' })
    await first.relations.add('p', { subject: dana.id, predicate: 'mentors', value: 'Sam', validFrom: MARCH })
    await first.relations.add('p', { subject: dana.id, predicate: 'mentors', value: 'Lee', validFrom: JUNE })
    expect(await first.relations.current('p', dana.id)).toHaveLength(2)
    await first.close()
    const second = await createMemory({ ...opts, modules: [knowledgeModule({ predicates: { mentors: 'one' } })] })
    expect((await second.relations.current('p', dana.id)).map((r) => r.value)).toEqual(['Lee'])
    expect(() => knowledgeModule({ predicates: { mentors: 'few' as never } })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    await second.close()
  })
})
