import { Dexie } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../../test/support/memory.js'
import { batchRowsOf, docsByIds, sharedPrefix } from './batch-pack.js'
import { withoutDead } from './merger.js'
import { docAt } from '../ranking/text-query.js'
import { SCHEMA } from '../../catalog/schema.js'
import { docRowsOf, docsById, expandRows, firstOf, idHash, idPrefixes, isBatch, type StoredDocRow, withoutMembers } from './doc-batches.js'
import { TERM_SEPARATOR, type TextBatchRow, type TextDocRow } from './index-rows.js'

/** An analyzed document row (as docRowOf makes them). */
function docRow(i: number, q: number, terms: string[], f?: number[]): TextDocRow {
  const row: TextDocRow = { q, d: `message:m${i}`, a: 1_000 + i, l: terms.length + 1, t: terms.join(TERM_SEPARATOR), k: i % 3 }
  if (f) row.f = Uint16Array.from(f)
  return row
}

/** What a member row says, as compared (typed arrays as plain ones). */
const plain = (row: TextDocRow) => ({ ...row, f: row.f ? [...row.f] : undefined })

describe('batch rows of documents', () => {
  it('stand for the single rows they pack: numbers, ids, terms and frequencies', () => {
    const rows = [
      docRow(0, 1, ['river', 'garden'], [2, 1]),
      docRow(1, 1, []),
      docRow(2, 1, ['lantern']),
      docRow(3, 2, ['pixel', 'oslo', 'porto'], [1, 3, 1]),
      docRow(4, 2, ['zebra']),
    ]
    const expected = rows.map((row) => plain({ ...row }))
    const packed = batchRowsOf(rows, 41)
    // One batch per project, in order; each keyed by its last document.
    expect(packed.map((row) => [row.n, row.q, isBatch(row) ? row.m : 1])).toEqual([
      [43, 1, 3],
      [45, 2, 2],
    ])
    expect(rows.map((row) => row.n)).toEqual([41, 42, 43, 44, 45])
    const members = expandRows(packed)
    expect(members.map((row) => row.n)).toEqual([41, 42, 43, 44, 45])
    members.forEach((member, i) => {
      const want = expected[i]!
      expect({ ...plain(member), f: member.f && [...member.f].every((x) => x === 1) ? undefined : plain(member).f }).toEqual({ ...want, n: 41 + i })
    })
    // A member found by number from the row at or above it.
    expect(docAt(packed[0], 42)?.d).toBe('message:m1')
    expect(docAt(packed[0], 44)).toBeUndefined()
    expect(docAt(packed[1], 44)?.t).toBe(`pixel${TERM_SEPARATOR}oslo${TERM_SEPARATOR}porto`)
  })

  it('split a long run into rows a few tens of kilobytes each, and keep a batch of one as a single row', () => {
    const long = Array.from({ length: 400 }, (_, i) =>
      docRow(
        i,
        1,
        Array.from({ length: 40 }, (_, j) => `term${(i * 7 + j) % 500}`),
      ),
    )
    const packed = batchRowsOf(long, 1)
    expect(packed.length).toBeGreaterThan(4)
    for (const row of packed) expect(row.t.length + (isBatch(row) ? row.i!.length : 1) * 20).toBeLessThan(40_000)
    expect(expandRows(packed).map((row) => row.n)).toEqual(long.map((_, i) => i + 1))
    const [one] = batchRowsOf([docRow(9, 1, ['solo'])], 7)
    expect(isBatch(one!)).toBe(false)
    expect(one).toMatchObject({ n: 7, d: 'message:m9', t: 'solo' })
  })

  it('keep facts out of batches: a fact id holds its key, and a batch is found by plain hashes of its ids', () => {
    const rows = [docRow(0, 1, ['a']), docRow(1, 1, ['b']), { ...docRow(2, 1, ['c']), d: 'fact:p/k' }, docRow(3, 1, ['d']), docRow(4, 1, ['e'])]
    const packed = batchRowsOf(rows, 1)
    expect(packed.map((row) => (isBatch(row) ? [row.n, row.m, row.i] : [row.n, 1, row.d]))).toEqual([
      [2, 2, ['message:m0', 'message:m1']],
      [3, 1, 'fact:p/k'],
      [5, 2, ['message:m3', 'message:m4']],
    ])
    expect((packed[0] as TextBatchRow).h).toEqual([idHash('message:m0'), idHash('message:m1')])
    expect((packed[0] as TextBatchRow).d).toBeUndefined()
  })

  it('find a member by the hash of its id, and only the member whose id it is', async () => {
    const db = new Dexie(`doc-batches-${Math.random()}`, { indexedDB: new IDBFactory(), IDBKeyRange })
    db.version(1).stores({ textDocs: SCHEMA.textDocs! })
    const table = db.table('textDocs') as Dexie.Table<StoredDocRow, number>
    const [batch] = batchRowsOf([docRow(0, 1, ['a']), docRow(1, 1, ['b']), docRow(2, 1, ['c'])], 1) as TextBatchRow[]
    // Member 2 also carries the hash of an id the batch does not hold: two ids of one hash.
    await table.add({ ...batch!, h: [batch!.h![0]!, idHash('message:elsewhere'), batch!.h![2]!] })
    expect((await docsById(table, 'message:m0')).map((row) => [row.n, row.d])).toEqual([[1, 'message:m0']])
    expect(await docsById(table, 'message:elsewhere')).toEqual([])
    // A removed member is found no more.
    await table.put(withoutMembers((await table.get(3)) as TextBatchRow, [1], 0)!)
    expect(await docsById(table, 'message:m0')).toEqual([])
    expect((await docsById(table, 'message:m2')).map((row) => row.n)).toEqual([3])
    db.close()
  })

  it('key a batch of ids that share a long prefix by that prefix, cut to a set length, and find each member, and only members, by it', async () => {
    const id = (tail: string) => `message:0190abcd-${tail}`
    expect(sharedPrefix([id('1234-7aaa'), id('1235-7bbb'), id('1231-7ccc')])).toBe('message:0190abcd-123')
    // The shared prefix is cut down to a length of the grid (16, 20, 24, …); below the shortest there is none.
    expect(sharedPrefix([id('1234-7aaa'), id('1299-7bbb')])).toBe('message:0190abcd')
    expect(sharedPrefix(['message:0190abc1', 'message:0190abc2'])).toBeUndefined()
    // An id's prefixes of every length of the grid; past its end, the id itself (no batch key of that length can equal it).
    expect([...new Set(idPrefixes(id('1234-7aaa')))]).toEqual(['message:0190abcd', 'message:0190abcd-123', 'message:0190abcd-1234-7a', id('1234-7aaa')])

    const db = new Dexie(`doc-batches-${Math.random()}`, { indexedDB: new IDBFactory(), IDBKeyRange })
    db.version(1).stores({ textDocs: SCHEMA.textDocs! })
    const table = db.table('textDocs') as Dexie.Table<StoredDocRow, number>
    const row = (d: string) => ({ q: 1, d, a: 1, l: 1, t: '', k: 0 })
    const near = batchRowsOf([id('1234-7aaa'), id('1235-7bbb'), id('1231-7ccc')].map(row), 1) as TextBatchRow[]
    const random = batchRowsOf(['message:f3a1', 'message:07bc'].map(row), 4) as TextBatchRow[]
    expect([near[0]!.p, near[0]!.h]).toEqual(['message:0190abcd-123', undefined])
    expect([random[0]!.p, random[0]!.h]).toEqual([undefined, [idHash('message:f3a1'), idHash('message:07bc')]])
    await table.bulkAdd([...near, ...random])
    const found = async (d: string) => (await docsById(table, d)).map((r) => [r.n, r.d])
    expect(await found(id('1235-7bbb'))).toEqual([[2, id('1235-7bbb')]])
    expect(await found('message:07bc')).toEqual([[5, 'message:07bc']])
    // An id of the prefix that is no member is not found; nor is a member once removed.
    expect(await found(id('1239-7ddd'))).toEqual([])
    await table.put(withoutMembers(near[0]!, [2], 0)!)
    expect(await found(id('1235-7bbb'))).toEqual([])
    expect(await found(id('1231-7ccc'))).toEqual([[3, id('1231-7ccc')]])
    // Many ids at once: batches of either kind, each read once.
    const many = await docsByIds(table, [id('1234-7aaa'), id('1235-7bbb'), 'message:f3a1', id('1239-7ddd'), 'message:none'])
    expect(many.map((r) => r.n).sort()).toEqual([1, 4])
    db.close()
  })

  it('drop members never merged, keep merged ones as dead until a purge, and go when nothing is left', () => {
    const [batch] = batchRowsOf([docRow(0, 1, ['a']), docRow(1, 1, ['b']), docRow(2, 1, ['c']), docRow(3, 1, ['d'])], 11) as TextBatchRow[]
    // Documents 11–14; the merge mark is 12: 11 and 12 are merged.
    const less = withoutMembers(batch!, [12, 13], 12)!
    expect(less.c).toBe(3)
    expect(less.x).toBe(1)
    const members = docRowsOf(less)
    expect(members.map((row) => [row.n, row.x ?? 0, row.d ?? null])).toEqual([
      [11, 0, 'message:m0'],
      [12, 1, null],
      [14, 0, 'message:m3'],
    ])
    expect(batch!.i).toEqual(['message:m0', 'message:m1', 'message:m2', 'message:m3'])
    const purged = withoutDead(less, new Set([12]))!
    expect(purged.c).toBe(2)
    expect(purged.x).toBeUndefined()
    expect(docRowsOf(purged).map((row) => row.n)).toEqual([11, 14])
    expect(withoutMembers(purged, [11, 14], 12)).toMatchObject({ c: 1, r: [0], x: 1 })
    expect(withoutMembers(purged, [11, 14], 10)).toBeUndefined()
  })
})

describe('bulk writes in batch rows', () => {
  it('write a few rows for many messages, and find, replace and remove their members by id', async () => {
    const memory = await openTestMemory({ mergeDelayMs: Infinity, mergeAt: Infinity } as Record<string, unknown>)
    await memory.projects.create({ name: 'P', id: 'p' })
    await memory.sessions.create('p', { id: 's' })
    const written = await memory.messages.appendMany(
      's',
      Array.from({ length: 120 }, (_, i) => ({ role: 'user' as const, content: `note ${i} ${i % 4 === 0 ? 'heron' : 'egret'}` })),
    )
    const raw = await new Dexie(`engram:test:${memory.userId}`, { indexedDB: memory.indexedDB, IDBKeyRange }).open()
    const rows = await raw.table('textDocs').toArray()
    expect(rows.length).toBeLessThan(4)
    expect(rows.reduce((sum, row) => sum + (row.m ?? 1), 0)).toBe(120)
    const count = async (word: string) => (await memory.search('p', word, { limit: 500 })).filter((h) => h.text.includes(word)).length
    expect(await count('heron')).toBe(30)
    await memory.messages.edit(written[0]!.id, { content: 'a bittern now' })
    await memory.messages.delete(written[4]!.id)
    expect(await count('heron')).toBe(28)
    expect(await count('bittern')).toBe(1)
    // Engram's ids grow with time: a batch is found by their shared prefix, one key, not a hash per member
    // (the counts above show the edit and the delete found the members they replaced and removed).
    const after = (await raw.table('textDocs').toArray()) as StoredDocRow[]
    // 118 members left in their batches and the edited message's new row.
    expect(after.reduce((sum, row) => sum + (isBatch(row) ? row.c : 1), 0)).toBe(119)
    const batches = after.filter(isBatch)
    expect(batches.length).toBeGreaterThan(0)
    expect(batches.every((row) => typeof row.p === 'string' && row.h === undefined)).toBe(true)
    raw.close()
    // After a reopen (the state read back from the batch rows) the same.
    memory.close()
    const reopened = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId } as Record<string, unknown>)
    const again = async (word: string) => (await reopened.search('p', word, { limit: 500 })).filter((h) => h.text.includes(word)).length
    expect(await again('heron')).toBe(28)
    expect(await again('bittern')).toBe(1)
    reopened.close()
  })

  it('replace the members of earlier batches when a dump is merged in again', async () => {
    const memory = await openTestMemory({ mergeDelayMs: Infinity, mergeAt: Infinity } as Record<string, unknown>)
    await memory.projects.create({ name: 'P', id: 'p' })
    await memory.sessions.create('p', { id: 's' })
    const row = (i: number, content: string) => ({
      id: `m${i}`,
      sessionId: 's',
      projectId: 'p',
      seq: i + 1,
      role: 'user',
      content,
      tokens: 3,
      createdAt: 10 + i,
    })
    // An import writes batch rows from the first (it loads what packs them before it writes).
    await memory.import(
      { format: 'engram-dump', version: 1, exportedAt: 0, tables: { messages: Array.from({ length: 40 }, (_, i) => row(i, `note ${i} heron`)) } },
      { mode: 'merge' },
    )
    const raw = await new Dexie(`engram:test:${memory.userId}`, { indexedDB: memory.indexedDB, IDBKeyRange }).open()
    const live = async () => (await raw.table('textDocs').toArray()).reduce((sum, r) => sum + (isBatch(r) ? r.c : 1), 0)
    expect((await raw.table('textDocs').toArray()).every(isBatch)).toBe(true)
    expect(await live()).toBe(40)
    // Half of them edited elsewhere; the dump merged back in, twice.
    const edited = Array.from({ length: 40 }, (_, i) => row(i, `note ${i} ${i % 2 === 0 ? 'bittern' : 'heron'}`))
    for (let round = 0; round < 2; round++) {
      await memory.import({ format: 'engram-dump', version: 1, exportedAt: 0, tables: { messages: edited } }, { mode: 'merge' })
      expect(await live()).toBe(40)
    }
    const count = async (word: string) => (await memory.search('p', word, { limit: 500 })).filter((h) => h.text.includes(word)).length
    expect(await count('heron')).toBe(20)
    expect(await count('bittern')).toBe(20)
    raw.close()
    memory.close()
  })

  it('number a batch after a document added before it in the same transaction, and a document added after it above the batch', async () => {
    const memory = await openTestMemory({ mergeDelayMs: Infinity, mergeAt: Infinity } as Record<string, unknown>)
    await memory.projects.create({ name: 'P', id: 'p' })
    await memory.sessions.create('p', { id: 's' })
    // An import writes facts, messages and summaries in one transaction: singles and batches side by side.
    await memory.import(
      {
        format: 'engram-dump',
        version: 1,
        exportedAt: 0,
        tables: {
          facts: [
            {
              id: 'p/solo',
              projectId: 'p',
              key: 'solo',
              value: 'a lone fact about herons',
              confidence: 1,
              tags: [],
              tagKeys: [],
              createdAt: 1,
              updatedAt: 1,
              version: 1,
              hlc: '0000000000001.00000.dev',
            },
          ],
          messages: Array.from({ length: 20 }, (_, i) => ({
            id: `0190${String(i).padStart(8, '0')}-0000-7000-8000-000000000000`,
            sessionId: 's',
            projectId: 'p',
            seq: i + 1,
            role: 'user',
            content: `heron sighting ${i}`,
            tokens: 3,
            createdAt: 10 + i,
          })),
        },
      },
      { mode: 'merge' },
    )
    await memory.facts.set('p', 'later', 'herons again')
    const hits = await memory.search('p', 'heron', { limit: 100 })
    expect(hits.filter((h) => h.kind === 'message')).toHaveLength(20)
    expect(hits.filter((h) => h.kind === 'fact')).toHaveLength(2)
    const raw = await new Dexie(`engram:test:${memory.userId}`, { indexedDB: memory.indexedDB, IDBKeyRange }).open()
    // From each row's key and member count (an encrypted store seals a batch's member ids).
    const numbers = (await raw.table('textDocs').toArray()).flatMap((row) =>
      isBatch(row) ? Array.from({ length: row.m }, (_, i) => firstOf(row) + i) : [row.n],
    )
    expect(new Set(numbers).size).toBe(numbers.length)
    raw.close()
    memory.close()
  })
})
