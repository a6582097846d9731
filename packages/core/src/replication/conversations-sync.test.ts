import type { BackgroundExtractor, Memory, MirroredRecord } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { describe, expect, it } from 'vitest'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

/** A device whose project p1 syncs its conversations; every device shares one wall clock. */
async function device(clock = testClock()): Promise<Memory> {
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ id: 'p1', name: 'P1' })
  await memory.projects.setSync('p1', { messages: true })
  return memory
}

/** Moves every pending record of `from` (one document, or all) into `to`, as the sync mirror does. */
async function deliver(from: Memory, to: Memory, doc?: string): Promise<MirroredRecord[]> {
  const pending = await replicationOf(from).pending(doc === undefined ? { limit: 10_000 } : { projectId: 'p1', doc, limit: 10_000 })
  const records = pending.flatMap((p) => (p.record ? [p.record] : []))
  await replicationOf(to).applyRemote(records)
  await replicationOf(from).ack(pending.map((p) => p.seq))
  return records
}

const contents = async (memory: Memory, sessionId: string): Promise<string[]> => (await memory.messages.tail(sessionId, 100)).map((m) => m.content)

describe('conversations sync (core)', () => {
  it('setSync turns conversations on (and the project sync with it); off by default', async () => {
    const memory = await openTestMemory()
    const p = await memory.projects.create({ id: 'p1', name: 'P1', sync: { enabled: true } })
    expect(p.sync.messages).toBeUndefined()
    const s = await memory.sessions.create('p1')
    await memory.messages.append(s.id, { role: 'user', content: 'local only' })
    expect((await replicationOf(memory).pending()).map((e) => e.kind)).toEqual([])
    expect(await memory.projects.setSync('p1', { messages: true })).toMatchObject({ sync: { enabled: true, messages: true } })
    await memory.messages.append(s.id, { role: 'user', content: 'synced' })
    expect((await replicationOf(memory).pending()).map((e) => [e.kind, e.record?.row.content])).toEqual([['messages', 'synced']])
    expect(await memory.projects.setSync('p1', { enabled: false })).toMatchObject({ sync: { enabled: false, messages: true } })
    await expect(memory.projects.setSync('p1', { messages: 'yes' as unknown as boolean })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.projects.setSync('nope', { messages: true })).rejects.toMatchObject({ code: 'not_found' })
    await memory.close()
  })

  it('a session and its messages reach another device; they are searchable and read in the same order there', async () => {
    const clock = testClock()
    const a = await device(clock)
    const b = await device(clock)
    const s = await a.sessions.create('p1', { title: 'Trip' })
    await a.messages.appendExchange(s.id, 'Where is the bicycle?', 'Behind the library.')
    // The session goes to the project document, its messages to the session's.
    const projectDoc = await replicationOf(a).pending({ projectId: 'p1', doc: '' })
    expect(projectDoc.map((e) => e.kind)).toEqual(['sessions'])
    expect((await replicationOf(a).pending({ projectId: 'p1', doc: s.id })).map((e) => e.kind)).toEqual(['messages', 'messages'])
    await deliver(a, b)
    expect(await b.sessions.get(s.id)).toMatchObject({ title: 'Trip', status: 'active' })
    expect(await contents(b, s.id)).toEqual(['Where is the bicycle?', 'Behind the library.'])
    expect((await b.messages.tail(s.id, 2)).map((m) => m.seq)).toEqual([1, 2])
    expect((await b.search('p1', 'bicycle')).map((h) => h.kind)).toContain('message')
    // B continues the conversation; A sees it after delivery.
    await b.messages.append(s.id, { role: 'user', content: 'Thanks' })
    await deliver(b, a)
    expect(await contents(a, s.id)).toEqual(['Where is the bicycle?', 'Behind the library.', 'Thanks'])
    // A turn on B starts from the conversation written on A.
    const { context } = await b.turns.begin('p1', { sessionId: s.id, turnId: 't1', prompt: 'And the lock?', budget: 2_000 })
    expect(context.text).toContain('Behind the library.')
    await a.close()
    await b.close()
  })

  it('devices appending while apart keep every message and agree on one order; local seq stays gap-free', async () => {
    const clock = testClock()
    const a = await device(clock)
    const b = await device(clock)
    const s = await a.sessions.create('p1')
    await deliver(a, b)
    await a.messages.append(s.id, { role: 'user', content: 'a1' })
    clock.advance(5)
    await b.messages.append(s.id, { role: 'user', content: 'b1' })
    clock.advance(5)
    await a.messages.append(s.id, { role: 'user', content: 'a2' })
    await b.messages.append(s.id, { role: 'user', content: 'b2' })
    await deliver(a, b)
    await deliver(b, a)
    const order = await contents(a, s.id)
    expect(order).toHaveLength(4)
    expect(await contents(b, s.id)).toEqual(order)
    expect(order.slice(0, 2)).toEqual(['a1', 'b1'])
    for (const memory of [a, b]) {
      const seqs = (await memory.messages.tail(s.id, 10)).map((m) => m.seq).sort((x, y) => x - y)
      expect(seqs).toEqual([1, 2, 3, 4])
      // page walks the merged order with seq cursors.
      const first = await memory.messages.page(s.id, { limit: 3 })
      const rest = await memory.messages.page(s.id, { after: first.next!, limit: 3 })
      expect([...first.items, ...rest.items].map((m) => m.content)).toEqual(order)
      expect(rest.next).toBeUndefined()
    }
    // The same record again changes nothing (append-only, stable ids).
    const again = await replicationOf(a).applyRemote((await replicationOf(b).snapshot('p1', { doc: s.id })).records)
    expect(again.applied).toBe(0)
    await a.close()
    await b.close()
  })

  it('a message that arrives before its session gets a placeholder the session record replaces', async () => {
    const a = await device()
    const b = await device()
    const s = await a.sessions.create('p1', { title: 'Later' })
    await a.messages.append(s.id, { role: 'user', content: 'early' })
    await deliver(a, b, s.id)
    expect(await contents(b, s.id)).toEqual(['early'])
    expect((await b.sessions.get(s.id))?.title).toBeUndefined()
    await deliver(a, b, '')
    expect(await b.sessions.get(s.id)).toMatchObject({ title: 'Later' })
    expect(await contents(b, s.id)).toEqual(['early'])
    await a.close()
    await b.close()
  })

  it('a purged session is purged on every device, and late messages of it are dropped', async () => {
    const a = await device()
    const b = await device()
    const s = await a.sessions.create('p1')
    await a.messages.append(s.id, { role: 'user', content: 'secret plan' })
    await deliver(a, b)
    await b.messages.append(s.id, { role: 'user', content: 'written on b while apart' })
    expect(await a.sessions.purge(s.id)).toBe(1)
    expect(await a.sessions.get(s.id)).toBeUndefined()
    await expect(a.messages.tail(s.id, 5)).rejects.toMatchObject({ code: 'not_found' })
    await deliver(a, b)
    expect(await b.sessions.get(s.id)).toBeUndefined()
    expect((await b.sessions.list('p1')).items).toEqual([])
    expect(await b.search('p1', 'secret')).toEqual([])
    await deliver(b, a)
    expect(await a.sessions.get(s.id)).toBeUndefined()
    expect(await a.search('p1', 'written')).toEqual([])
    await expect(a.sessions.purge(s.id)).rejects.toMatchObject({ code: 'not_found' })
    await a.close()
    await b.close()
  })

  it('edits and deletions travel with their clocks: the latest wins, the message keeps its place and seq', async () => {
    const clock = testClock()
    const a = await device(clock)
    const b = await device(clock)
    const s = await a.sessions.create('p1')
    const [m1] = await a.messages.appendMany(s.id, [
      { role: 'user', content: 'teh bicycle' },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'secret code 1234' },
    ])
    await deliver(a, b)
    const third = (await b.messages.tail(s.id, 3))[2]!
    clock.advance(5)
    expect(await a.messages.edit(m1!.id, { content: 'the bicycle', meta: { fixed: true } })).toMatchObject({ content: 'the bicycle', seq: 1 })
    await b.messages.delete(third.id)
    expect(await contents(b, s.id)).toEqual(['teh bicycle', 'noted'])
    expect(await b.search('p1', 'secret')).toEqual([])
    await deliver(a, b)
    await deliver(b, a)
    for (const memory of [a, b]) {
      expect(await contents(memory, s.id)).toEqual(['the bicycle', 'noted'])
      expect((await memory.messages.tail(s.id, 5)).map((m) => m.seq)).toEqual([1, 2])
      expect(await memory.search('p1', 'secret')).toEqual([])
      expect((await memory.search('p1', 'bicycle')).map((h) => h.id)).toContain(m1!.id)
    }
    // A later message still gets the next seq; deleted ones cannot be edited or deleted again.
    expect((await a.messages.append(s.id, { role: 'user', content: 'more' })).seq).toBe(4)
    await expect(a.messages.delete(third.id)).rejects.toMatchObject({ code: 'not_found' })
    await expect(a.messages.edit(third.id, { content: 'x' })).rejects.toMatchObject({ code: 'not_found' })
    await expect(a.messages.edit(m1!.id, {})).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(a.messages.edit(m1!.id, { content: 'x'.repeat(1024 * 1024 + 1) })).rejects.toMatchObject({ code: 'limit_exceeded' })
    // An older copy of the edited message changes nothing.
    const stale = (await replicationOf(b).snapshot('p1', { doc: s.id })).records.find((r) => r.id === m1!.id)!
    expect(
      (await replicationOf(a).applyRemote([{ ...stale, hlc: '0000000000001.00000.old', row: { ...stale.row, hlc: '0000000000001.00000.old' } }])).applied,
    ).toBe(0)
    expect((await a.messages.tail(s.id, 1))[0]?.content).toBe('more')
    await a.close()
    await b.close()
  })

  it('refuses conversation records for a project whose conversations do not sync, and malformed ones', async () => {
    const a = await device()
    const b = await openTestMemory()
    await b.projects.create({ id: 'p1', name: 'P1', sync: { enabled: true } })
    const s = await a.sessions.create('p1')
    await a.messages.append(s.id, { role: 'user', content: 'hi' })
    const records = (await replicationOf(a).pending()).flatMap((p) => (p.record ? [p.record] : []))
    const result = await replicationOf(b).applyRemote(records)
    expect(result.rejected).toHaveLength(records.length)
    expect(await b.sessions.get(s.id)).toBeUndefined()
    const c = await device()
    const message = records.find((r) => r.kind === 'messages')!
    const bad = [
      { ...message, row: { ...message.row, role: 'robot' } },
      { ...message, row: { ...message.row, at: 'yesterday' } },
      { ...message, row: { ...message.row, seq: 7 } },
      { ...message, row: { ...message.row, content: 'x'.repeat(1024 * 1024 + 1) } },
    ]
    expect((await replicationOf(c).applyRemote(bad)).rejected).toHaveLength(bad.length)
    expect(await c.sessions.get(s.id)).toBeUndefined()
    await a.close()
    await b.close()
    await c.close()
  })
})

describe('observations sync with the conversation', () => {
  it('an observation reaches another device in the project document, and its purge follows', async () => {
    const clock = testClock()
    const observer: BackgroundExtractor = {
      extract: async () => [],
      observe: async () => ({ observations: [{ text: 'The user loves night trains.', priority: 'high', expiresAt: clock.now() + 60_000 }] }),
      settings: { observeTokens: 5 },
    }
    const a = await openTestMemory({ now: clock.now, extractor: observer })
    await a.projects.create({ id: 'p1', name: 'P1' })
    await a.projects.setSync('p1', { messages: true })
    const b = await device(clock)
    const s = await a.sessions.create('p1', { title: 'Trains' })
    for (const [i, prompt] of ['I love night trains.', 'The sleeper to Vienna is my favourite.', 'I take it every spring.'].entries()) {
      await a.turns.begin('p1', { sessionId: s.id, turnId: `t${i}`, prompt, budget: 500 })
      await a.turns.end({ sessionId: s.id, turnId: `t${i}`, reply: 'Lovely.' })
    }
    await a.extraction.flush()
    expect((await a.observations.list(s.id)).map((o) => o.text)).toEqual(['The user loves night trains.'])
    const records = await deliver(a, b, '')
    expect(records.map((r) => r.kind)).toContain('observations')
    await deliver(a, b, s.id)
    expect((await b.observations.list(s.id)).map((o) => [o.text, o.priority])).toEqual([['The user loves night trains.', 'high']])
    // It expires: the sweep leaves a text-free tombstone that travels.
    clock.advance(60_000)
    expect(await a.extraction.sweep()).toBe(1)
    await deliver(a, b, '')
    expect(await b.observations.list(s.id, { all: true })).toEqual([])
    await a.close()
    await b.close()
  })
})
