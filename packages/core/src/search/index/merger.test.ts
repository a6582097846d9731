import { Dexie } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { SCHEMA } from '../../catalog/schema.js'
import type { TextDocRow } from './index-rows.js'
import { BLOCK_POSTINGS, inTermOrder, mergeTail, OPEN_BLOCK, type MergeTables } from './merger.js'
import { decodeBlocks } from './posting-codec.js'

async function tables(): Promise<{ db: Dexie; t: MergeTables }> {
  const db = new Dexie(`merger-${Math.random()}`, { indexedDB: new IDBFactory(), IDBKeyRange })
  db.version(1).stores(SCHEMA)
  await db.open()
  const t = { textDocs: db.table('textDocs'), textBlocks: db.table('textBlocks'), textCorpus: db.table('textCorpus'), meta: db.table('meta') } as MergeTables
  await t.textCorpus.put({ p: 'p', q: 1, docs: 0, length: 0 })
  return { db, t }
}

const doc = (i: number): TextDocRow => ({
  q: 1,
  d: `message:${i}`,
  a: i,
  l: 3 + (i % 5),
  t: i % 3 === 0 ? 'river\u0000lamp' : 'river',
  f: i % 3 === 0 ? Uint16Array.of(1 + (i % 4), 2) : Uint16Array.of(1 + (i % 4)),
  k: i % 4,
})

describe('mergeTail', () => {
  it('appends across sealed blocks batch by batch and purges dead documents, keeping every live posting exact', async () => {
    const { db, t } = await tables()
    const n = BLOCK_POSTINGS * 2 + 300
    await t.textDocs.bulkAdd(Array.from({ length: n }, (_, i) => doc(i)))
    for (;;) if (!(await mergeTail(t, 700)).more) break
    const blocks = inTermOrder(await t.textBlocks.where('[q+w+b]').between([1, 'river', Dexie.minKey], [1, 'river', Dexie.maxKey]).toArray())
    expect(blocks.map((b) => b.b)).toEqual([1, 2, OPEN_BLOCK])
    expect(blocks.map((b) => b.c)).toEqual([BLOCK_POSTINGS, BLOCK_POSTINGS, 300])
    const list = decodeBlocks(blocks)
    expect(Array.from(list.docs.subarray(0, list.count))).toEqual(Array.from({ length: n }, (_, i) => i + 1))
    for (let j = 0; j < list.count; j++) {
      expect([list.tfs[j], list.kinds[j], list.lens[j]]).toEqual([1 + (j % 4), j % 4, 3 + (j % 5)])
    }
    expect(await t.textCorpus.get('p')).toMatchObject({ docs: n, length: Array.from({ length: n }, (_, i) => 3 + (i % 5)).reduce((a, b) => a + b, 0) })

    // Kill every tenth document, then merge: they leave every block of their terms and the statistics.
    // Single rows (written one by one above).
    const victims = (await t.textDocs.filter((row) => row.n! % 10 === 0).toArray()) as TextDocRow[]
    await t.textDocs.bulkPut(victims.map(({ d: _d, ...row }) => ({ ...row, x: 1 as const })))
    const outcome = await mergeTail(t)
    expect(outcome.purged.sort((a, b) => a - b)).toEqual(victims.map((v) => v.n!))
    const after = decodeBlocks(inTermOrder(await t.textBlocks.where('[q+w+b]').between([1, 'river', Dexie.minKey], [1, 'river', Dexie.maxKey]).toArray()))
    expect(Array.from(after.docs.subarray(0, after.count))).toEqual(Array.from({ length: n }, (_, i) => i + 1).filter((x) => x % 10 !== 0))
    const lamp = decodeBlocks(await t.textBlocks.where('[q+w+b]').between([1, 'lamp', Dexie.minKey], [1, 'lamp', Dexie.maxKey]).toArray())
    expect(Array.from(lamp.docs.subarray(0, lamp.count))).toEqual(Array.from({ length: n }, (_, i) => i + 1).filter((x) => (x - 1) % 3 === 0 && x % 10 !== 0))
    expect(await t.textDocs.where('x').equals(1).count()).toBe(0)
    expect((await t.textCorpus.get('p'))!.docs).toBe(n - victims.length)
    db.close()
  })
})
