import { Observable } from 'lib0/observable'
import * as Y from 'yjs'

/** One entry of the array: `{ key, val }` (the layout of y-utility's `YKeyValue`). */
export interface KeyValueEntry<T> {
  key: string
  val: T
}

/** What changed for one key in a transaction (the shape of y-utility's `YKeyValue` events). */
export type KeyValueChange<T> = { action: 'add'; newValue: T } | { action: 'update'; oldValue: T; newValue: T } | { action: 'delete'; oldValue: T }

/** The live entry of a key and where it sits in the document. */
interface Live<T> extends KeyValueEntry<T> {
  client: number
  clock: number
}

/**
 * A key-value map stored as a `Y.Array` of `{ key, val }`, in the exact
 * document layout of y-utility's `YKeyValue` (devices running either read and
 * write the same documents): a write appends the pair and deletes the key's
 * previous pair; of concurrent pairs of one key the rightmost wins and the
 * others are deleted. The layout keeps documents small under overwrites (one
 * deleted array item per overwrite, where a `Y.Map` keeps more).
 *
 * What differs is the cost of a write. `YKeyValue` finds the previous pair by
 * scanning the whole array and copies the whole array in its observer, so a
 * write costs O(entries). Here every live pair is known by its Yjs id: the
 * previous pair is deleted by id (a binary search in the struct store), the
 * observer reads only the structs the transaction added or deleted, and the
 * rightmost pair of a key is found by walking left from the end of the array,
 * which for appended pairs stops at once.
 */
export class KeyValue<T> extends Observable<'change'> {
  /** The live entry of every key. */
  readonly map = new Map<string, Live<T>>()
  readonly doc: Y.Doc
  /** Some item of the array at or near its end (walked right to the real end when needed). */
  private tail: Y.ID | null = null
  /** This device's pairs appended in a row at the end (they merge into one Yjs item). */
  private run = 0

  constructor(readonly yarray: Y.Array<KeyValueEntry<T>>) {
    super()
    this.doc = yarray.doc!
    const duplicates: Y.ID[] = []
    for (let item = yarray._start; item !== null; item = item.right) {
      this.tail = item.id
      forEachEntry<T>(item, (entry, client, clock) => {
        const prev = this.map.get(entry.key)
        if (prev) duplicates.push(Y.createID(prev.client, prev.clock)) // the rightmost wins
        this.map.set(entry.key, { key: entry.key, val: entry.val, client, clock })
      })
    }
    if (duplicates.length > 0)
      this.doc.transact((tr) => {
        for (const id of duplicates) this.deleteEntry(tr, id)
      })
    yarray.observe((_event, tr) => this.onTransaction(tr))
  }

  /** The value of `key`, if any. */
  get(key: string): T | undefined {
    return this.map.get(key)?.val
  }

  has(key: string): boolean {
    return this.map.has(key)
  }

  /**
   * Writes `key`: deletes its previous pair and appends the new one, in one transaction.
   *
   * Yjs merges pairs one device appends in a row into one item, and deleting
   * one pair out of an item copies the whole item: with 10,000 pairs in one
   * item every overwrite would cost 10,000 copies. So every {@link RUN_LIMIT}-th
   * pair in a row goes just before the last pair instead of after it, which
   * keeps items short (where the new pair sits among other keys' pairs does
   * not matter: only the order of one key's pairs does). Deleted runs still
   * merge, so the document stays as small.
   */
  set(key: string, val: T): void {
    this.doc.transact((tr) => {
      const prev = this.map.get(key)
      if (prev) this.deleteEntry(tr, Y.createID(prev.client, prev.clock))
      const last = this.markEnd()
      const ownRun = last !== null && !last.deleted && last.countable && last.id.client === this.doc.clientID
      this.run = ownRun ? this.run + 1 : 1
      if (ownRun && this.run > RUN_LIMIT && this.yarray.length > 0) {
        this.yarray.insert(this.yarray.length - 1, [{ key, val }])
        this.run = 0
      } else {
        this.yarray.push([{ key, val }])
      }
    })
  }

  /** Deletes `key`'s pair. */
  delete(key: string): void {
    const prev = this.map.get(key)
    if (prev) this.doc.transact((tr) => this.deleteEntry(tr, Y.createID(prev.client, prev.clock)))
  }

  /** Deletes the array element with id `id` (splitting its item when it holds several). */
  private deleteEntry(tr: Y.Transaction, id: Y.ID): void {
    const item = Y.getItemCleanStart(tr, id)
    if (item.length > 1) Y.getItemCleanEnd(tr, this.doc.store, id)
    if (!item.deleted) item.delete(tr)
  }

  /** The last item of the array, found from the remembered tail. */
  private end(): Y.Item | null {
    let item = this.tail === null ? this.yarray._start : Y.getItem(this.doc.store, this.tail)
    if (item === null) return null
    while (item.right !== null) item = item.right
    this.tail = item.id
    return item
  }

  /**
   * Leaves one correct search marker at the end of the array: `push` starts
   * from the marker with the highest index (without it, from the first item),
   * and deletes by id do not update Yjs' markers, so stale ones are dropped.
   */
  private markEnd(): Y.Item | null {
    const last = this.end()
    if (last === null) return null
    const index = this.yarray._length - (last.countable && !last.deleted ? last.length : 0)
    last.marker = true
    this.yarray._searchMarker = [{ p: last, index, timestamp: 0 } as unknown as NonNullable<Y.Array<unknown>['_searchMarker']>[number]]
    return last
  }

  private onTransaction(tr: Y.Transaction): void {
    const changes = new Map<string, KeyValueChange<T>>()
    // Pairs deleted in this transaction that were live: the key lost its value (maybe replaced below).
    const removed = new Map<string, T>()
    Y.iterateDeletedStructs(tr, tr.deleteSet, (struct) => {
      if (!(struct instanceof Y.Item) || struct.parent !== this.yarray) return
      forEachEntry<T>(
        struct,
        (entry, client, clock) => {
          const live = this.map.get(entry.key)
          if (live && live.client === client && live.clock === clock) {
            this.map.delete(entry.key)
            removed.set(entry.key, live.val)
          }
        },
        true,
      )
    })
    // Pairs added in this transaction, by key.
    const added = new Set<string>()
    for (const [client, after] of tr.afterState) {
      const before = tr.beforeState.get(client) ?? 0
      if (after <= before) continue
      const structs = this.doc.store.clients.get(client)!
      for (let i = Y.findIndexSS(structs, before); i < structs.length; i++) {
        const struct = structs[i]!
        if (!(struct instanceof Y.Item) || struct.parent !== this.yarray || struct.deleted) continue
        forEachEntry<T>(struct, (entry, _c, clock) => {
          if (clock >= before) added.add(entry.key)
        })
      }
    }
    const losers: Y.ID[] = []
    if (added.size > 0) {
      // Walk left from the end: the first live pair of each added key is its winner, the others lose.
      const pending = new Set(added)
      for (let item = this.end(); item !== null && pending.size > 0; item = item.left) {
        if (item.deleted) continue
        forEachEntry<T>(
          item,
          (entry, client, clock) => {
            if (!added.has(entry.key)) return
            if (!pending.delete(entry.key)) return void losers.push(Y.createID(client, clock))
            const prev = this.map.get(entry.key)
            if (prev && prev.client === client && prev.clock === clock) return // the old pair still wins
            if (prev) losers.push(Y.createID(prev.client, prev.clock))
            this.map.set(entry.key, { key: entry.key, val: entry.val, client, clock })
            const old = prev
              ? { found: true, value: prev.val }
              : removed.has(entry.key)
                ? { found: true, value: removed.get(entry.key) as T }
                : { found: false, value: undefined }
            changes.set(entry.key, old.found ? { action: 'update', oldValue: old.value as T, newValue: entry.val } : { action: 'add', newValue: entry.val })
            removed.delete(entry.key)
          },
          false,
          true,
        )
      }
      // Added pairs left of their key's winner that the walk did not reach lose too.
      if (pending.size > 0) throw new Error('KeyValue: an added pair was not found in the array')
      this.collectHiddenLosers(tr, added, losers)
    }
    for (const [key, oldValue] of removed) changes.set(key, { action: 'delete', oldValue })
    if (losers.length > 0)
      this.doc.transact((t) => {
        for (const id of losers) this.deleteEntry(t, id)
      })
    if (changes.size > 0) this.emit('change', [changes, tr])
  }

  /** Added pairs of a key that are not its live pair and were not passed by the walk (left of the winner). */
  private collectHiddenLosers(tr: Y.Transaction, keys: ReadonlySet<string>, losers: Y.ID[]): void {
    const seen = new Set(losers.map((id) => `${id.client}:${id.clock}`))
    for (const [client, after] of tr.afterState) {
      const before = tr.beforeState.get(client) ?? 0
      if (after <= before) continue
      const structs = this.doc.store.clients.get(client)!
      for (let i = Y.findIndexSS(structs, before); i < structs.length; i++) {
        const struct = structs[i]!
        if (!(struct instanceof Y.Item) || struct.parent !== this.yarray || struct.deleted) continue
        forEachEntry<T>(struct, (entry, c, clock) => {
          if (clock < before || !keys.has(entry.key)) return
          const live = this.map.get(entry.key)
          if (live && live.client === c && live.clock === clock) return
          if (!seen.has(`${c}:${clock}`)) losers.push(Y.createID(c, clock))
        })
      }
    }
  }
}

/** Pairs appended in a row before one is placed to keep Yjs items short. */
const RUN_LIMIT = 128

/** Calls `f` for every pair an item holds (left to right, or right to left), with its id. */
function forEachEntry<T>(item: Y.Item, f: (entry: KeyValueEntry<T>, client: number, clock: number) => void, evenDeleted = false, rightToLeft = false): void {
  if ((item.deleted && !evenDeleted) || !item.countable || !(item.content instanceof Y.ContentAny || item.content instanceof Y.ContentJSON)) return
  const entries = item.content.getContent() as Array<KeyValueEntry<T>>
  const { client, clock } = item.id
  if (rightToLeft) {
    for (let k = entries.length - 1; k >= 0; k--) f(entries[k]!, client, clock + k)
  } else {
    for (let k = 0; k < entries.length; k++) f(entries[k]!, client, clock + k)
  }
}
