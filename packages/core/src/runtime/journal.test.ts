import { describe, expect, it } from 'vitest'
import { MemoryError, type Change } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

describe('journal', () => {
  it('appends with a gap-free per-session seq and clock time', async () => {
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now })
    const a = await memory.journal.append('s1', { kind: 'step', payload: { n: 1 } })
    clock.advance(10)
    const b = await memory.journal.append('s1', { kind: 'step', payload: [1, 'two'], triggerId: 't1' })
    const other = await memory.journal.append('s2', { kind: 'step', payload: null, occurredAt: 5 })
    expect(a).toEqual({ sessionId: 's1', seq: 1, kind: 'step', payload: { n: 1 }, occurredAt: clock.now() - 10 })
    expect(b).toMatchObject({ seq: 2, triggerId: 't1', occurredAt: clock.now() })
    expect(other).toMatchObject({ sessionId: 's2', seq: 1, occurredAt: 5 })
  })

  it('gives 100 parallel appends seqs 1..100 without duplicates', async () => {
    const memory = await openTestMemory()
    const records = await Promise.all(Array.from({ length: 100 }, (_, i) => memory.journal.append('busy', { kind: 'k', payload: i })))
    expect(records.map((r) => r.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
    const loaded = await memory.journal.load('busy')
    expect(loaded.lastSeq).toBe(100)
    expect(loaded.records.map((r) => r.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
  })

  it('returns the existing record for a repeated idempotency key, also under concurrency', async () => {
    const memory = await openTestMemory()
    const first = await memory.journal.append('s', { kind: 'call', payload: 1, idempotencyKey: 'k1' })
    const again = await memory.journal.append('s', { kind: 'call', payload: 2, idempotencyKey: 'k1' })
    expect(again).toEqual(first)
    const racing = await Promise.all([1, 2, 3].map((n) => memory.journal.append('s', { kind: 'call', payload: n, idempotencyKey: 'k2' })))
    expect(new Set(racing.map((r) => r.seq)).size).toBe(1)
    expect((await memory.journal.load('s')).records).toHaveLength(2)
    // Keys are per session.
    expect((await memory.journal.append('other', { kind: 'call', payload: 1, idempotencyKey: 'k1' })).seq).toBe(1)
  })

  it('rejects bad input and oversized payloads, writing nothing', async () => {
    const memory = await openTestMemory()
    const seen: Change[] = []
    await memory.changes.subscribe({}, (b) => seen.push(...b))
    const bad = [
      memory.journal.append('', { kind: 'k', payload: 1 }),
      memory.journal.append('s', { kind: '', payload: 1 }),
      memory.journal.append('s', { kind: 'k' } as never),
      memory.journal.append('s', { kind: 'k', payload: { f: () => 1 } as never }),
      memory.journal.append('s', { kind: 'k', payload: NaN }),
      memory.journal.append('s', { kind: 'k', payload: 1, occurredAt: -1 }),
      memory.journal.append('s', { kind: 'k', payload: 1, idempotencyKey: ' x' }),
      memory.journal.append('s', null as never),
    ]
    for (const p of bad) await expect(p).rejects.toMatchObject({ code: 'invalid_input' })
    const big = 'x'.repeat(1024 * 1024)
    await expect(memory.journal.append('s', { kind: 'k', payload: big })).rejects.toMatchObject({ code: 'limit_exceeded' })
    await expect(memory.journal.append('s', { kind: 'k', payload: 'x'.repeat(1024 * 1024 - 2) })).resolves.toMatchObject({ seq: 1 })
    expect(seen).toHaveLength(1)
    expect((await memory.journal.load('s')).records).toHaveLength(1)
  })

  it('loads a snapshot with lastSeq and the latest outcome', async () => {
    const memory = await openTestMemory()
    expect(await memory.journal.load('empty')).toEqual({ sessionId: 'empty', records: [] })
    await memory.journal.append('s', { kind: 'outcome', payload: 'first', idempotencyKey: 'a' })
    await memory.journal.append('s', { kind: 'outcome', payload: 'second', idempotencyKey: 'b' })
    await memory.journal.append('s', { kind: 'note', payload: 'after' })
    const snap = await memory.journal.load('s')
    expect(snap.lastSeq).toBe(3)
    expect(snap.latestOutcome).toMatchObject({ seq: 2, payload: 'second' })
    expect(await memory.journal.findOutcome('s', 'a')).toMatchObject({ seq: 1, payload: 'first' })
    expect(await memory.journal.findOutcome('s', 'missing')).toBeUndefined()
    await memory.journal.append('s', { kind: 'note', payload: 1, idempotencyKey: 'n' })
    expect(await memory.journal.findOutcome('s', 'n')).toBeUndefined()
  })

  it('pages by seq cursor and time range', async () => {
    const clock = testClock(1000)
    const memory = await openTestMemory({ now: clock.now })
    for (let i = 0; i < 10; i++) {
      await memory.journal.append('s', { kind: 'k', payload: i })
      clock.advance(100)
    }
    const p1 = await memory.journal.page('s', { limit: 4 })
    expect(p1.items.map((r) => r.seq)).toEqual([1, 2, 3, 4])
    expect(p1.next).toBe(4)
    const p2 = await memory.journal.page('s', { limit: 4, after: p1.next })
    expect(p2.items.map((r) => r.seq)).toEqual([5, 6, 7, 8])
    const p3 = await memory.journal.page('s', { limit: 4, after: p2.next })
    expect(p3).toEqual({ items: expect.any(Array) })
    expect(p3.items.map((r) => r.seq)).toEqual([9, 10])
    const ranged = await memory.journal.page('s', { since: 1200, until: 1500, limit: 10 })
    expect(ranged.items.map((r) => r.seq)).toEqual([3, 4, 5, 6])
    expect((await memory.journal.page('s')).items).toHaveLength(10)
    expect((await memory.journal.page('s', { limit: 2, since: 1200 })).next).toBe(4)
    await expect(memory.journal.page({ sessionId: 's' } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.journal.page('s', { sessionId: 's' } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.journal.page('s', { limit: 0 })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.journal.page('s', { limit: 1, after: -1 })).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('lists sessions by time range, most recently active first, with paging', async () => {
    const memory = await openTestMemory()
    await memory.journal.append('a', { kind: 'k', payload: 1, occurredAt: 100 })
    await memory.journal.append('a', { kind: 'k', payload: 1, occurredAt: 200 })
    await memory.journal.append('b', { kind: 'k', payload: 1, occurredAt: 300 })
    await memory.journal.append('c', { kind: 'k', payload: 1, occurredAt: 50 })
    expect(await memory.journal.sessions({ limit: 10 })).toEqual({
      items: [
        { sessionId: 'b', first: 300, last: 300, count: 1 },
        { sessionId: 'a', first: 100, last: 200, count: 2 },
        { sessionId: 'c', first: 50, last: 50, count: 1 },
      ],
    })
    expect((await memory.journal.sessions({ since: 150, until: 250, limit: 10 })).items.map((s) => s.sessionId)).toEqual(['a'])
    const first = await memory.journal.sessions({ limit: 1 })
    expect(first.items.map((s) => s.sessionId)).toEqual(['b'])
    const second = await memory.journal.sessions({ limit: 1, after: first.next })
    expect(second.items.map((s) => s.sessionId)).toEqual(['a'])
    const third = await memory.journal.sessions({ limit: 1, after: second.next })
    expect(third).toEqual({ items: [expect.objectContaining({ sessionId: 'c' })] })
    await expect(memory.journal.sessions({ offset: 1 } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.journal.sessions({ after: 'b' })).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('tracks pending approvals by resume token; a later resolution clears them; survives reopen', async () => {
    const memory = await openTestMemory()
    await memory.journal.append('s', { kind: 'approval.pending', payload: { resumeToken: 'r1', action: 'send email' } })
    await memory.journal.append('s', { kind: 'approval.pending', payload: { resumeToken: 'r2' } })
    await memory.journal.append('s', { kind: 'approval.resolved', payload: { resumeToken: 'r2', approved: true } })
    expect(await memory.journal.pendingApproval('s', 'r1')).toMatchObject({ seq: 1, payload: { resumeToken: 'r1', action: 'send email' } })
    expect(await memory.journal.pendingApproval('s', 'r2')).toBeUndefined()
    expect(await memory.journal.pendingApproval('s', 'nope')).toBeUndefined()
    expect(await memory.journal.pendingApproval('other', 'r1')).toBeUndefined()
    await memory.close()
    const reopened = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId })
    const pending = await reopened.journal.pendingApproval('s', 'r1')
    expect(pending).toEqual({
      sessionId: 's',
      seq: 1,
      kind: 'approval.pending',
      payload: { resumeToken: 'r1', action: 'send email' },
      occurredAt: expect.any(Number),
    })
    expect((await reopened.journal.append('s', { kind: 'k', payload: 1 })).seq).toBe(4)
    await reopened.journal.append('s', { kind: 'approval.resolved', payload: { resumeToken: 'r1' } })
    expect(await reopened.journal.pendingApproval('s', 'r1')).toBeUndefined()
  })

  it('emits one journal change per append with an empty projectId', async () => {
    const memory = await openTestMemory()
    const seen: Change[] = []
    await memory.changes.subscribe({ kinds: ['journal'] }, (b) => seen.push(...b))
    await memory.journal.append('s', { kind: 'k', payload: 1 })
    await memory.journal.append('s', { kind: 'k', payload: 1, idempotencyKey: 'i' })
    await memory.journal.append('s', { kind: 'k', payload: 1, idempotencyKey: 'i' })
    expect(seen).toEqual([
      { kind: 'journal', op: 'put', id: 's#1', projectId: '', origin: 'local' },
      { kind: 'journal', op: 'put', id: 's#2', projectId: '', origin: 'local' },
    ])
  })

  it('fails with closed after close', async () => {
    const memory = await openTestMemory()
    await memory.close()
    await expect(memory.journal.append('s', { kind: 'k', payload: 1 })).rejects.toBeInstanceOf(MemoryError)
    await expect(memory.journal.load('s')).rejects.toMatchObject({ code: 'closed' })
  })
})
