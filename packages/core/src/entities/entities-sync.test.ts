import { describe, expect, it } from 'vitest'
import { replicationOf } from '@engram/core/internal'
import { openTestMemory } from '../../../../test/support/memory.js'

describe('entities as sync applies them', () => {
  it('a relation that arrives before its entities is found by their names once they arrive', async () => {
    const [a, b] = [await openTestMemory(), await openTestMemory()]
    for (const m of [a, b]) await m.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    const dana = await a.entities.upsert('p', { name: 'Dana', type: 'person' })
    const acme = await a.entities.upsert('p', { name: 'Acme', type: 'organisation' })
    await a.relations.add('p', { subject: dana.id, predicate: 'works_at', object: acme.id })
    const { records } = await replicationOf(a).snapshot('p')
    // Sync order: the relation first, its entities later.
    await replicationOf(b).applyRemote(records.filter((r) => r.kind === 'relations'))
    // Indexed with the bare ids meanwhile.
    expect((await b.search('p', 'dana', { kinds: ['relation'] })).map((h) => h.text)).toEqual(['p/person/dana works at p/organisation/acme'])
    const applied = await replicationOf(b).applyRemote(records.filter((r) => r.kind === 'entities'))
    expect(applied.rejected).toEqual([])
    expect((await b.search('p', 'dana acme', { kinds: ['relation'] })).map((h) => h.text)).toEqual(['Dana works at Acme'])
    await Promise.all([a.close(), b.close()])
  })

  it('refuses observation stamps and tombstones that are malformed', async () => {
    const [a, b] = [await openTestMemory(), await openTestMemory()]
    for (const m of [a, b]) await m.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
    const dana = await a.entities.upsert('p', { name: 'Dana', type: 'person', observations: ['Climbs'] })
    await a.entities.removeObservations('p', dana.id, ['Climbs'])
    const [record] = (await replicationOf(a).snapshot('p')).records.filter((r) => r.kind === 'entities')
    expect(record!.row.observationTombstones).toEqual([{ text: 'Climbs', hlc: record!.hlc }])
    const bad = [
      { ...record!.row, observations: ['x'], observationStamps: [] },
      { ...record!.row, observationTombstones: [{ text: 'x', hlc: 'soon' }] },
      { ...record!.row, observationTombstones: [{ text: 'x', hlc: record!.hlc, extra: 1 }] },
    ]
    const result = await replicationOf(b).applyRemote(bad.map((row) => ({ ...record!, row })))
    expect(result.rejected).toHaveLength(3)
    await Promise.all([a.close(), b.close()])
  })
})
