import { replicationOf } from '@engram/core/internal'
import { describe, expect, it } from 'vitest'
import type { Change } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

async function syncedStore(clock = testClock()) {
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ id: 'p1', name: 'P1', sync: { enabled: true } })
  return memory
}

describe('replication', () => {
  it('pending() returns outbox entries with the current record; ack() removes them', async () => {
    const memory = await syncedStore()
    await memory.facts.set('p1', 'color', 'blue')
    await memory.facts.set('p1', 'color', 'green')
    const pending = await replicationOf(memory).pending()
    expect(pending).toHaveLength(2)
    expect(pending[0]!.record?.row.value).toBe('green')
    expect(pending[0]!.record?.id).toBe('p1/color')
    expect(pending[0]!.record?.row).not.toHaveProperty('tagKeys')
    await replicationOf(memory).ack(pending.map((p) => p.seq))
    expect(await replicationOf(memory).pending()).toEqual([])
    await memory.close()
  })

  it('writes to projects without sync do not reach the outbox', async () => {
    const memory = await syncedStore()
    await memory.projects.create({ id: 'p2', name: 'P2' })
    await memory.facts.set('p2', 'k', 1)
    expect(await replicationOf(memory).pending()).toEqual([])
    expect(await replicationOf(memory).pending({ projectId: 'p2' })).toEqual([])
    await memory.close()
  })

  it('applyRemote() stores newer records as remote changes, without outbox rows, and reports newer local ones', async () => {
    const a = await syncedStore()
    const b = await syncedStore()
    await a.facts.set('p1', 'k', 'from a')
    const [entry] = await replicationOf(a).pending()
    const seen: Change[] = []
    await b.changes.subscribe({}, (batch) => seen.push(...batch))
    const result = await replicationOf(b).applyRemote([entry!.record!])
    expect(result).toMatchObject({ applied: 1, newer: [], rejected: [] })
    expect((await b.facts.get('p1', 'k'))?.value).toBe('from a')
    expect(seen).toEqual([{ kind: 'facts', op: 'put', id: 'p1/k', projectId: 'p1', origin: 'remote' }])
    expect(await replicationOf(b).pending()).toEqual([])
    // b now writes later (its clock learned a's stamp): a's old record loses and b reports its own
    await b.facts.set('p1', 'k', 'from b')
    const again = await replicationOf(b).applyRemote([entry!.record!])
    expect(again.applied).toBe(0)
    expect(again.newer.map((r) => r.row.value)).toEqual(['from b'])
    a.close()
    b.close()
  })

  it('applyRemote() skips malformed records and applies the rest', async () => {
    const a = await syncedStore()
    await a.facts.set('p1', 'ok', 1)
    const [entry] = await replicationOf(a).pending()
    const bad = { ...entry!.record!, row: { ...entry!.record!.row, confidence: 'high' } }
    const b = await syncedStore()
    const result = await replicationOf(b).applyRemote([bad, entry!.record!])
    expect(result.applied).toBe(1)
    expect(result.rejected).toHaveLength(1)
    a.close()
    b.close()
  })

  it('rejects malformed arguments with MemoryError invalid_input, and closed after close()', async () => {
    const memory = await syncedStore()
    await expect(replicationOf(memory).applyRemote(null as never)).rejects.toMatchObject({ name: 'MemoryError', code: 'invalid_input' })
    await expect(replicationOf(memory).applyRemote('x' as never)).rejects.toMatchObject({ name: 'MemoryError', code: 'invalid_input' })
    await expect(replicationOf(memory).pending(null as never)).rejects.toMatchObject({ name: 'MemoryError', code: 'invalid_input' })
    await expect(replicationOf(memory).pending({ limit: 0 })).rejects.toMatchObject({ code: 'invalid_input' })
    await memory.close()
    const record = { kind: 'facts' as const, projectId: 'p1', id: 'p1/k', hlc: 'x', row: { key: 'k', value: 1 } }
    await expect(replicationOf(memory).applyRemote([record])).rejects.toMatchObject({ code: 'closed' })
    await expect(replicationOf(memory).ack([1])).rejects.toMatchObject({ code: 'closed' })
  })

  it('snapshot() returns facts with tombstones and summaries, plus the project outbox seqs', async () => {
    const memory = await syncedStore()
    await memory.facts.set('p1', 'a', 1)
    await memory.facts.set('p1', 'b', 2)
    await memory.facts.delete('p1', 'b')
    await memory.summaries.create('p1', { kind: 'project', text: 'all about p1' })
    const { records, outbox } = await replicationOf(memory).snapshot('p1')
    expect(records.map((r) => `${r.kind}:${r.row.key ?? r.row.text}:${r.row.deletedAt === undefined ? 'live' : 'dead'}`).sort()).toEqual([
      'facts:a:live',
      'facts:b:dead',
      'summaries:all about p1:live',
    ])
    expect(outbox).toHaveLength(4)
    await memory.close()
  })
})
