import { replicationOf } from '@engram/core/internal'
import { describe, expect, it } from 'vitest'
import type { Memory, MirroredRecord } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

const stamp = (ms: number, device = 'remotedevice') => `${String(ms).padStart(13, '0')}.00000.${device}`
// Within the drift bound of the stores' clock (2026-01-01T00:00Z).
const SOON = Date.UTC(2026, 0, 1) + 60_000

async function store(): Promise<Memory> {
  const memory = await openTestMemory({ now: testClock().now })
  await memory.projects.create({ id: 'p1', name: 'Synced', sync: { enabled: true } })
  await memory.projects.create({ id: 'local', name: 'Not synced' })
  return memory
}

function summary(row: Record<string, unknown>, projectId = 'p1', id = 's1', hlc = stamp(SOON)): MirroredRecord {
  return { kind: 'summaries', projectId, id, hlc, row: { id, projectId, kind: 'project', text: 'A summary', createdAt: 1, ...row } as MirroredRecord['row'] }
}

describe('remote records are checked exactly like local writes', () => {
  it('accepts a well-formed summary of a synced project', async () => {
    const memory = await store()

    const result = await replicationOf(memory).applyRemote([summary({})])
    expect(result).toMatchObject({ applied: 1, rejected: [] })
    expect((await memory.summaries.latest('p1'))?.text).toBe('A summary')
    await memory.close()
  })

  it.each([
    ['a text longer than summaries.create accepts', { text: 'x'.repeat(500_000) }],
    ['an empty text', { text: '' }],
    ['a field the kind does not have', { text: 'ok', injected: true }],
    ['coversUntil that is not a time', { coversUntil: 'not-a-number' }],
    ['a createdAt beyond what a Date holds', { createdAt: 1e20 }],
    ['a session summary without a session', { kind: 'session' }],
  ])('rejects a summary with %s, storing nothing', async (_what, fields) => {
    const memory = await store()
    const record = summary(fields)
    const result = await replicationOf(memory).applyRemote([record])
    expect(result.applied).toBe(0)
    expect(result.rejected).toEqual([record])
    expect((await memory.summaries.list('p1')).items).toEqual([])
    await memory.close()
  })

  it('rejects records of a project whose sync is off, and never moves a row of another project', async () => {
    const memory = await store()
    const local = await memory.summaries.create('local', { kind: 'project', text: 'private to this device' })
    const intoSynced = summary({ text: 'overwritten' }, 'p1', local.id)
    const intoLocal = summary({ text: 'pushed in' }, 'local', 's9')
    const result = await replicationOf(memory).applyRemote([intoSynced, intoLocal])
    expect(result.applied).toBe(0)
    expect(result.rejected).toHaveLength(2)
    expect(await memory.summaries.latest('local')).toEqual(local)
    expect((await memory.summaries.list('p1')).items).toEqual([])
    await memory.close()
  })

  it('sets malformed clock stamps aside and takes a far-ahead one without moving the clock', async () => {
    const memory = await store()
    for (const hlc of ['~', '9999999999999', '', 'abc.def.ghi']) {
      const result = await replicationOf(memory).applyRemote([summary({}, 'p1', `s-${hlc.length}`, hlc)])
      expect(result.applied).toBe(0)
      expect(result.quarantined).toEqual([expect.objectContaining({ verdict: 'malformed' })])
    }
    // Well-formed, however far ahead: applied (as on every device), the clock stays.
    const far = await replicationOf(memory).applyRemote([summary({}, 'p1', 's-far', '9999999999999.99999.x')])
    expect(far).toMatchObject({ applied: 1, quarantined: [] })
    // A local write after the bad stamps still gets an ordinary, current stamp.
    await memory.facts.set('p1', 'k', 'v')
    const [pending] = await replicationOf(memory).pending()
    expect(pending!.hlc).toMatch(/^\d{13}\.\d{5}\./)
    expect(pending!.hlc.startsWith(String(Date.UTC(2026, 0, 1)))).toBe(true)
    await memory.close()
  })

  it('rejects a block whose text is longer than its own limit, and a fact whose id is not its key', async () => {
    const memory = await store()
    const hlc = stamp(SOON)
    const block: MirroredRecord = {
      kind: 'blocks',
      projectId: 'p1',
      id: 'persona',
      hlc,
      row: { projectId: 'p1', label: 'persona', value: 'x'.repeat(20), limit: 10, readOnly: false, updatedAt: 1 },
    }
    const fact: MirroredRecord = {
      kind: 'facts',
      projectId: 'p1',
      id: 'p1/other',
      hlc,
      row: { projectId: 'p1', key: 'k', value: 1, confidence: 1, tags: [], createdAt: 1, updatedAt: 1 },
    }
    const result = await replicationOf(memory).applyRemote([block, fact])
    expect(result.rejected).toEqual([block, fact])
    expect(await memory.blocks.get('p1', 'persona')).toBeUndefined()
    expect(await memory.facts.get('p1', 'k')).toBeUndefined()
    await memory.close()
  })
})

describe('facts.purge in a synced project', () => {
  it('leaves a content-free tombstone that replicates and purges the fact on the other device', async () => {
    const a = await store()
    const b = await store()
    await a.facts.set('p1', 'diagnosis', 'secret value', { tags: ['health'], source: { note: 'from the doctor' } })
    await replicationOf(b).applyRemote((await replicationOf(a).pending()).flatMap((p) => (p.record ? [p.record] : [])))
    expect((await b.search('p1', 'secret')).length).toBe(1)

    expect(await a.facts.purge('p1', 'diagnosis')).toBe(1)
    expect(await a.facts.get('p1', 'diagnosis')).toBeUndefined()
    expect((await a.facts.deleted('p1')).items).toEqual([])
    expect(await a.facts.history('p1', 'diagnosis')).toEqual([])
    expect(await a.facts.restore('p1', 'diagnosis')).toBeUndefined()
    const pending = await replicationOf(a).pending()
    const purge = pending[pending.length - 1]!.record!
    expect(JSON.stringify(purge)).not.toContain('secret')
    expect(JSON.stringify(purge)).not.toContain('doctor')
    expect(purge.row).toMatchObject({ purged: true, value: null, tags: [] })

    expect(await replicationOf(b).applyRemote([purge])).toMatchObject({ applied: 1 })
    expect(await b.facts.get('p1', 'diagnosis')).toBeUndefined()
    expect(await b.facts.history('p1', 'diagnosis')).toEqual([])
    expect(await b.search('p1', 'secret')).toEqual([])
    expect(JSON.stringify(await b.export('p1'))).not.toContain('secret')

    // The key can be used again; the new fact beats the tombstone everywhere.
    const again = await a.facts.set('p1', 'diagnosis', 'fine')
    expect(again.value).toBe('fine')
    await a.close()
    await b.close()
  })

  it('an older remote state does not bring a purged fact back', async () => {
    const a = await store()
    const b = await store()
    await a.facts.set('p1', 'k', 'old')
    const old = (await replicationOf(a).pending())[0]!.record!
    await replicationOf(b).applyRemote([old])
    await b.facts.purge('p1', 'k')
    expect(await replicationOf(b).applyRemote([old])).toMatchObject({ applied: 0 })
    expect(await b.facts.get('p1', 'k')).toBeUndefined()
    await a.close()
    await b.close()
  })

  it('purges without a tombstone where the project does not sync', async () => {
    const memory = await store()
    await memory.facts.set('local', 'k', 'v')
    await memory.facts.purge('local', 'k')
    const dump = await memory.export('local')
    expect(dump.tables.facts).toEqual([])
    await memory.close()
  })
})

describe('import checks a dump exactly like the API', () => {
  async function dumpOf(memory: Memory) {
    return JSON.parse(JSON.stringify(await memory.export('p1')))
  }

  it.each([
    [
      'a summary created at 1e20',
      (d: { tables: Record<string, Record<string, unknown>[]> }) =>
        d.tables.summaries!.push({ id: 'bad', projectId: 'p1', kind: 'project', text: 't', createdAt: 1e20 }),
      'invalid_input',
    ],
    [
      'a fact value over 1 MiB',
      (d: { tables: Record<string, Record<string, unknown>[]> }) =>
        d.tables.facts!.push({ id: 'p1/big', projectId: 'p1', key: 'big', value: 'x'.repeat(8 * 1024 * 1024), version: 1, createdAt: 1, updatedAt: 1 }),
      'limit_exceeded',
    ],
    [
      'a malformed clock stamp',
      (d: { tables: Record<string, Record<string, unknown>[]> }) => {
        d.tables.facts![0]!.hlc = '~'
      },
      'invalid_input',
    ],
  ])('refuses a dump with %s and writes nothing', async (_what, spoil, code) => {
    const memory = await store()
    await memory.facts.set('p1', 'k', 'v')
    await memory.summaries.create('p1', { kind: 'project', text: 'kept' })
    const dump = await dumpOf(memory)
    spoil(dump)
    await expect(memory.import(dump, { mode: 'replace' })).rejects.toMatchObject({ code })
    expect((await memory.facts.get('p1', 'k'))?.value).toBe('v')
    const context = await memory.context.build('p1', { budget: 500 })
    expect(context.text).toContain('kept')
    await memory.close()
  })

  it('a dump never turns a project sync on', async () => {
    const source = await store()
    const dump = JSON.parse(JSON.stringify(await source.export()))
    for (const p of dump.tables.projects) p.sync = { enabled: true }
    const target = await openTestMemory()
    await target.import(dump, { mode: 'merge' })
    expect((await target.projects.get('local'))?.sync.enabled).toBe(false)
    expect((await target.projects.get('p1'))?.sync.enabled).toBe(false)
    expect(await replicationOf(target).pending()).toEqual([])
    await source.close()
    await target.close()
  })
})
