import { Dexie } from 'dexie'
import { IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { compareHlc, formatHlc, type Memory, type MirroredRecord } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { openTestContext } from '../../../../test/support/core-context.js'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'
import { highestStoredStamp } from './clock-restore.js'
import { createMessageEdits } from '../messages/message-edits.js'
import { messageStamp } from '../messages/message-order.js'
import { createMessages } from '../messages/messages.js'
import { createProjects } from '../projects/projects.js'
import { createSessions } from '../sessions/sessions.js'

const T = Date.UTC(2026, 0, 1)
const MIN = 60_000

function remoteFact(key: string, value: string, hlc: string): MirroredRecord {
  return { kind: 'facts', projectId: 'p1', id: `p1/${key}`, hlc, row: { key, value, confidence: 1, tags: [], createdAt: T, updatedAt: T } }
}

describe('the clock across restarts and against hostile stamps', () => {
  it('restores from the highest stored stamp: an edit after reopening beats a remote stamp from a fast clock', async () => {
    const clock = testClock(T)
    const first = await openTestMemory({ now: clock.now })
    await first.projects.create({ id: 'p1', name: 'P1', sync: { enabled: true } })
    const fast = formatHlc(T + 10 * MIN, 0, 'devicea')
    const result = await replicationOf(first).applyRemote([remoteFact('k', 'from A', fast)], { maxClockLeadMs: 15 * MIN })
    expect(result.applied).toBe(1)
    first.close()

    const reopened = await openTestMemory({ now: clock.now, indexedDB: first.indexedDB, userId: first.userId })
    await reopened.facts.set('p1', 'k', 'from B after restart')
    const [entry] = (await replicationOf(reopened).pending()).filter((p) => p.id === 'p1/k')
    expect(compareHlc(entry!.record!.hlc, fast)).toBeGreaterThan(0)
    reopened.close()
  })

  it('restores from stamps of every mirrored kind: a pattern from a fast clock', async () => {
    const clock = testClock(T)
    const first = await openTestMemory({ now: clock.now })
    await first.projects.create({ id: 'p1', name: 'P1', sync: { enabled: true } })
    const fast = formatHlc(T + 10 * MIN, 0, 'devicea')
    const pattern: MirroredRecord = {
      kind: 'patterns',
      projectId: 'p1',
      id: 'p1/walks',
      hlc: fast,
      row: { text: 'Walks', confidence: 0.5, observations: 1, createdAt: T, updatedAt: T },
    }
    expect((await replicationOf(first).applyRemote([pattern], { maxClockLeadMs: 15 * MIN })).applied).toBe(1)
    await first.close()
    const reopened = await openTestMemory({ now: clock.now, indexedDB: first.indexedDB, userId: first.userId })
    await reopened.patterns.observe('p1', 'walks')
    const [entry] = (await replicationOf(reopened).pending()).filter((p) => p.id === 'p1/walks')
    expect(compareHlc(entry!.record!.hlc, fast)).toBeGreaterThan(0)
    await reopened.close()
  })

  it('sets malformed stamps aside; takes stamps beyond the drift bound without moving the clock, and an edit of such a record still follows it', async () => {
    const clock = testClock(T)
    const memory = await openTestMemory({ now: clock.now })
    await memory.projects.create({ id: 'p1', name: 'P1', sync: { enabled: true } })
    const y2099 = formatHlc(Date.UTC(2099, 0, 1), 0, 'devf')
    const batch = [
      remoteFact('tilde', 'wins forever?', '~'),
      remoteFact('future', 'from 2099', y2099),
      remoteFact('max', 'top of the range', '9999999999999.99999.x'),
      remoteFact('honest', 'ok', formatHlc(T + 1, 0, 'devh')),
    ]
    const result = await replicationOf(memory).applyRemote(batch)
    expect(result.applied).toBe(3)
    expect(result.quarantined.map((q) => [q.record.row.key, q.verdict])).toEqual([['tilde', 'malformed']])
    expect(await memory.facts.get('p1', 'tilde')).toBeUndefined()
    expect((await memory.facts.get('p1', 'future'))?.value).toBe('from 2099')
    await memory.facts.set('p1', 'after', 1)
    const pending = async (key: string) => (await replicationOf(memory).pending()).find((p) => p.id === `p1/${key}`)!
    expect((await pending('after')).hlc.startsWith(String(T + 1))).toBe(true) // the clock followed only the honest stamp
    // The next edit of the far-ahead record is stamped just after it: it wins, and the clock stays.
    await memory.facts.set('p1', 'future', 'now')
    expect((await pending('future')).record!.hlc).toBe(formatHlc(Date.UTC(2099, 0, 1), 1, replicationOf(memory).deviceId))
    await memory.facts.set('p1', 'after', 2)
    expect((await pending('after')).record!.hlc.startsWith(String(T + 1))).toBe(true)
    // and it stays so after a restart: the restore skips stamps beyond the bound
    await memory.close()
    const reopened = await openTestMemory({ now: clock.now, indexedDB: memory.indexedDB, userId: memory.userId })
    await reopened.facts.set('p1', 'after', 3)
    const [again] = (await replicationOf(reopened).pending()).filter((p) => p.id === 'p1/after')
    expect(again!.record!.hlc.startsWith(String(T + 1))).toBe(true)
    expect(replicationOf(reopened).receiveClock('~')).toBe('malformed')
    await reopened.close()
  })
})

/** How many message rows the `hlc` index holds, read from the stored database (the field stays clear when encrypted). */
async function stampIndexEntries(memory: Memory & { indexedDB: IDBFactory }): Promise<number> {
  const raw = await new Dexie(`engram:test:${memory.userId}`, { indexedDB: memory.indexedDB, IDBKeyRange }).open()
  try {
    return await raw.table('messages').orderBy('hlc').count()
  } finally {
    raw.close()
  }
}

describe('message rows stored without their own stamp', () => {
  it("an append stores its rows without hlc and raises the session's lastAt; an edit keeps its own", async () => {
    const { ctx, clock } = await openTestContext()
    await createProjects(ctx).create({ id: 'p', name: 'P' })
    const session = await createSessions(ctx).create('p')
    const messages = createMessages(ctx)
    const written = await messages.appendMany(session.id, [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
    ])
    // The public shape is unchanged: no order key, no stamp.
    expect(Object.keys(written[0]!).sort()).toEqual(['content', 'createdAt', 'id', 'projectId', 'role', 'seq', 'sessionId', 'tokens'])
    const rows = await ctx.db.messages.bulkGet(written.map((m) => m.id))
    expect(rows.map((r) => r!.hlc)).toEqual([undefined, undefined])
    expect(rows.map((r) => messageStamp(r!))).toEqual(rows.map((r) => r!.at))
    expect(await ctx.db.messages.orderBy('hlc').count()).toBe(0)
    expect((await ctx.db.sessions.get(session.id))!.lastAt).toBe(rows[1]!.at)
    expect(await highestStoredStamp(ctx.db, clock.now())).toBe(rows[1]!.at)
    // A later append moves it on; the session's public shape leaves it out.
    clock.advance(1000)
    const [third] = await messages.appendMany(session.id, [{ role: 'user', content: 'three' }])
    const thirdAt = (await ctx.db.messages.get(third!.id))!.at!
    expect(compareHlc(thirdAt, rows[1]!.at)).toBeGreaterThan(0)
    expect((await ctx.db.sessions.get(session.id))!.lastAt).toBe(thirdAt)
    expect(await createSessions(ctx).get(session.id)).not.toHaveProperty('lastAt')
    // An edit is stamped after its append: its row keeps that stamp, in the index, and the restore finds it.
    clock.advance(1000)
    await createMessageEdits(ctx).edit(written[0]!.id, { content: 'one, edited' })
    const edited = (await ctx.db.messages.get(written[0]!.id))!
    expect(compareHlc(edited.hlc, thirdAt)).toBeGreaterThan(0)
    expect(messageStamp(edited)).toBe(edited.hlc)
    expect(await ctx.db.messages.orderBy('hlc').primaryKeys()).toEqual([edited.id])
    expect((await ctx.db.sessions.get(session.id))!.lastAt).toBe(thirdAt)
    expect(await highestStoredStamp(ctx.db, clock.now())).toBe(edited.hlc)
  })

  it('a store reopened after appends only starts its clock after the last append, with the wall clock set back', async () => {
    const clock = testClock(T)
    const first = await openTestMemory({ now: clock.now })
    await first.projects.create({ id: 'p1', name: 'P1' })
    const s = await first.sessions.create('p1')
    clock.advance(10 * MIN)
    await first.messages.appendMany(s.id, [
      { role: 'user', content: 'before the restart' },
      { role: 'assistant', content: 'still before' },
    ])
    expect(await stampIndexEntries(first)).toBe(0)
    await first.close()

    // The wall clock went back behind the appends (but not behind the session's creation).
    clock.set(T + MIN)
    const reopened = await openTestMemory({ now: clock.now, indexedDB: first.indexedDB, userId: first.userId })
    await reopened.messages.append(s.id, { role: 'user', content: 'after the restart' })
    // Merged order is the order of the append stamps: the new message comes last.
    expect((await reopened.messages.tail(s.id, 10)).map((m) => m.content)).toEqual(['before the restart', 'still before', 'after the restart'])
    await reopened.close()
  })

  it('an edit after reopening is stamped after the edit and the appends before it, where conversations sync', async () => {
    const clock = testClock(T)
    const first = await openTestMemory({ now: clock.now })
    await first.projects.create({ id: 'p1', name: 'P1' })
    await first.projects.setSync('p1', { messages: true })
    const s = await first.sessions.create('p1')
    const message = await first.messages.append(s.id, { role: 'user', content: 'first' })
    clock.advance(10 * MIN)
    await first.messages.edit(message.id, { content: 'first, edited' })
    clock.advance(MIN)
    await first.messages.append(s.id, { role: 'assistant', content: 'reply' })
    const pending = await replicationOf(first).pending()
    const stamps = new Map(pending.flatMap((p) => (p.record ? [[p.record.row.content, p.record.hlc] as const] : [])))
    // Records are as before: a stamp, and the row with it.
    for (const p of pending) if (p.record?.kind === 'messages') expect(p.record.row.hlc).toBe(p.record.hlc)
    // Nothing left in the outbox: only the rows and sessions hold the stamps.
    await replicationOf(first).ack(pending.map((p) => p.seq))
    expect(await stampIndexEntries(first)).toBe(1)
    await first.close()

    clock.set(T + MIN)
    const reopened = await openTestMemory({ now: clock.now, indexedDB: first.indexedDB, userId: first.userId })
    await reopened.messages.edit(message.id, { content: 'edited again' })
    const [again] = (await replicationOf(reopened).pending()).filter((p) => p.id === message.id)
    expect(compareHlc(again!.record!.hlc, stamps.get('first, edited'))).toBeGreaterThan(0)
    expect(compareHlc(again!.record!.hlc, stamps.get('reply'))).toBeGreaterThan(0)
    await reopened.close()
  })

  it('remote messages stamped at their append are stored the same way; a reopened receiver appends after them', async () => {
    const clock = testClock(T)
    const a = await openTestMemory({ now: () => clock.now() + 2 * MIN })
    const b = await openTestMemory({ now: clock.now })
    for (const m of [a, b]) {
      await m.projects.create({ id: 'p1', name: 'P1' })
      await m.projects.setSync('p1', { messages: true })
    }
    const s = await a.sessions.create('p1')
    // Stamped after the session's record, which alone would not restore B's clock past them.
    clock.advance(1000)
    await a.messages.appendExchange(s.id, 'from A', 'also from A')
    const pending = await replicationOf(a).pending()
    const records = pending.flatMap((p) => (p.record ? [p.record] : []))
    // The messages first (a placeholder session), then the session's record.
    const ordered = [...records.filter((r) => r.kind === 'messages'), ...records.filter((r) => r.kind !== 'messages')]
    expect((await replicationOf(b).applyRemote(ordered)).applied).toBe(3)
    expect(await stampIndexEntries(b)).toBe(0)
    // Already held: the same records again change nothing.
    expect((await replicationOf(b).applyRemote(ordered)).applied).toBe(0)
    await replicationOf(b).ack((await replicationOf(b).pending()).map((p) => p.seq))
    await b.close()

    const reopened = await openTestMemory({ now: clock.now, indexedDB: b.indexedDB, userId: b.userId })
    await reopened.messages.append(s.id, { role: 'user', content: 'from B' })
    expect((await reopened.messages.tail(s.id, 10)).map((m) => m.content)).toEqual(['from A', 'also from A', 'from B'])
    // What B sends back is stamped after A's messages.
    const [mine] = (await replicationOf(reopened).pending()).filter((p) => p.record?.row.content === 'from B')
    for (const r of records) expect(compareHlc(mine!.record!.hlc, r.hlc)).toBeGreaterThan(0)
    await reopened.close()
    await a.close()
  })
})
