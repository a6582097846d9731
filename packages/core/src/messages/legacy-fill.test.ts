import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import type { Dump } from '@engram/core'
import { openTestMemory } from '../../../../test/support/memory.js'
import { legacySessionStamp } from './legacy-fill.js'
import { legacyOrder, messageStamp, stampOfOrder } from './message-order.js'
import { EngramDb } from '../catalog/schema.js'
import type { MessageRow, SessionRow } from '../store/rows.js'

const message = (id: string, seq: number, extra: Partial<MessageRow> = {}): MessageRow => ({
  id,
  sessionId: 's',
  projectId: 'p',
  seq,
  role: 'user',
  content: `text ${id}`,
  tokens: 1,
  createdAt: 1000 + seq,
  ...extra,
})
const session = (id: string, extra: Partial<SessionRow> = {}): SessionRow => ({
  id,
  projectId: 'p',
  status: 'active',
  startedAt: 5000,
  lastActiveAt: 6000,
  lastSeq: 0,
  ...extra,
})

async function openDb(): Promise<EngramDb> {
  const db = new EngramDb(`fill-${Math.random()}`, { indexedDB: new IDBFactory(), IDBKeyRange })
  await db.open()
  return db
}

describe('rows written without an order key or stamp', () => {
  it('messages without a key get the legacy key and stamp by add, put and the bulk forms; keyed ones stay as given', async () => {
    const db = await openDb()
    const stamped = '0000000009000.00003.abcdefghijklmnop'
    const rows = [message('a', 1), message('b', 2), message('c', 3, { at: stamped }), message('d', 4, { at: stamped, hlc: '0000000009999.00000.other' })]
    await db.messages.add(rows[0]!)
    await db.messages.put(rows[1]!)
    await db.messages.bulkAdd([rows[2]!])
    await db.messages.bulkPut([rows[3]!, message('e', 5)])
    const stored = await db.messages.bulkGet(['a', 'b', 'c', 'd', 'e'])
    expect(stored.map((m) => [m?.at, m?.hlc])).toEqual([
      [legacyOrder(rows[0]!).at, legacyOrder(rows[0]!).hlc],
      [legacyOrder(rows[1]!).at, legacyOrder(rows[1]!).hlc],
      // A keyed row without a stamp is how an append is stored: its stamp is its key's.
      [stamped, undefined],
      [stamped, '0000000009999.00000.other'],
      [legacyOrder(message('e', 5)).at, legacyOrder(message('e', 5)).hlc],
    ])
    expect(stored.map((m) => messageStamp(m!))).toEqual([
      legacyOrder(rows[0]!).hlc,
      legacyOrder(rows[1]!).hlc,
      stampOfOrder(stamped),
      '0000000009999.00000.other',
      legacyOrder(message('e', 5)).hlc,
    ])
    // The rows given are completed in place, as the creating hooks before did.
    expect(rows[0]).toMatchObject(legacyOrder(rows[0]!))
    // Merged order follows seq for legacy rows.
    expect((await db.messages.where('[sessionId+at]').between(['s', ''], ['s', '\uffff']).toArray()).map((m) => m.id)).toEqual(['a', 'b', 'e', 'c', 'd'])
    db.close()
  })

  it('sessions get the legacy stamp of their start; placeholders and stamped sessions stay as they are', async () => {
    const db = await openDb()
    await db.sessions.add(session('plain'))
    await db.sessions.put(session('put'))
    await db.sessions.bulkPut([session('placeholder', { placeholder: true }), session('stamped', { hlc: '0000000007000.00001.device' })])
    const stored = await db.sessions.bulkGet(['plain', 'put', 'placeholder', 'stamped'])
    expect(stored.map((s) => s?.hlc)).toEqual([
      legacySessionStamp({ startedAt: 5000 }),
      legacySessionStamp({ startedAt: 5000 }),
      undefined,
      '0000000007000.00001.device',
    ])
    // Other tables are left alone.
    await db.projects.put({ id: 'p', name: 'P', sync: { enabled: false }, createdAt: 1, updatedAt: 1 })
    expect(await db.projects.get('p')).toEqual({ id: 'p', name: 'P', sync: { enabled: false }, createdAt: 1, updatedAt: 1 })
    db.close()
  })

  it('an imported dump of an older version reads in seq order, its sessions stamped (encrypted stores too)', async () => {
    const memory = await openTestMemory()
    const dump: Dump = {
      format: 'engram-dump',
      version: 1,
      exportedAt: 1,
      tables: {
        projects: [{ id: 'p', name: 'P', sync: { enabled: false }, createdAt: 1, updatedAt: 1 }],
        sessions: [session('s', { lastSeq: 3 })],
        // Same createdAt for seq 2 and 3, written out of order.
        messages: [message('m3', 3, { createdAt: 2000 }), message('m1', 1), message('m2', 2, { createdAt: 2000 })],
      },
    }
    await memory.import(dump, { mode: 'merge' })
    expect((await memory.messages.tail('s', 10)).map((m) => m.id)).toEqual(['m1', 'm2', 'm3'])
    const appended = await memory.messages.append('s', { role: 'assistant', content: 'after' })
    expect(appended.seq).toBe(4)
    expect((await memory.messages.tail('s', 10)).map((m) => m.id)).toEqual(['m1', 'm2', 'm3', appended.id])
    memory.close()
  })
})
