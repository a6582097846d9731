import {
  cmp,
  Dexie,
  type DBCoreQueryResponse,
  type DBCoreCursor,
  type DBCoreIndex,
  type DBCoreKeyRange,
  type DBCoreMutateRequest,
  type DBCoreMutateResponse,
  type DBCoreQueryRequest,
  type DBCoreTable,
  type DBCoreTransaction,
} from 'dexie'
import { CLEAR_FIELDS, HASHED_FIELDS, PLAIN_TABLES } from '../catalog/at-rest-fields.js'
import { MemoryError } from '../store/errors.js'
import { maxKey } from '../store/keys.js'
import { type Generation, generationOf, pack, unpack, utf8 } from './codec.js'

/*
 * How rows look on disk with encryption on. Per table, the fields IndexedDB
 * indexes stay as they are (ids, project ids, timestamps, sequence numbers,
 * statuses), except those that hold what a user wrote (fact keys, block labels,
 * tags, …: HASHED below), which are stored as keyed hashes so equality lookups
 * still work. Every other field is packed into one sealed field, `_c`, which
 * also keeps the plain values of the hashed fields.
 *
 * Everything above this layer sees plain rows and plain keys: a lookup by a
 * hashed field hashes the key; a range or prefix over a hashed field (which
 * hashes cannot order) is answered by reading the rows of the part of the
 * index that the range's clear prefix fixes (e.g. the project), decrypting
 * them, and filtering and ordering them as IndexedDB would have. During
 * `enable` / `rekey` rows of two generations (or plain rows) live side by side:
 * lookups try both forms of a hashed key.
 */

export { CLEAR_FIELDS, HASHED_FIELDS, PLAIN_TABLES }

/**
 * Values of a hashed field that are hashed: the search index's document ids only when they name a
 * fact (`fact:<project>/<key>` holds the key) or an entity (`entity:<project>/<type>/<name>`);
 * ids of messages, summaries, passages and relations are random.
 */
const HASH_WHEN: Readonly<Record<string, (value: string) => boolean>> = {
  'textDocs.d': (value) => value.startsWith('fact:') || value.startsWith('entity:'),
}

/** The field holding a row's sealed fields. */
export const SEALED = '_c'

/** The keys a store currently has: new rows use `current`; `previous` is the generation being migrated away from (`plain` during `enable`). */
export interface KeyState {
  current: Generation
  previous: Generation | 'plain' | undefined
  /** Every generation whose rows this store can still open. */
  byGen: ReadonlyMap<number, Generation>
}

/** A way of writing a hashed value: one generation's hash, or the plain value (rows not yet encrypted by `enable`). */
type Form = Generation | 'plain'

interface IndexInfo {
  index: DBCoreIndex
  /** Field per key component. */
  fields: readonly string[]
  /** Per component: hashed? */
  hashed: readonly boolean[]
  anyHashed: boolean
}

/** What the encryption layer knows of one table. */
export interface TableSpec {
  readonly name: string
  readonly plain: boolean
  readonly hashed: ReadonlySet<string>
  readonly clear: ReadonlySet<string>
  readonly context: Uint8Array
  readonly pk: IndexInfo
  readonly indexes: ReadonlyMap<string | null, IndexInfo>
  /** True when any index (or the primary key) holds a hashed field. */
  readonly anyHashed: boolean
}

function fieldsOf(keyPath: null | string | string[]): string[] {
  return keyPath === null ? [] : Array.isArray(keyPath) ? keyPath : [keyPath]
}

/** The spec of a table from its live schema. */
export function tableSpec(table: DBCoreTable): TableSpec {
  const name = table.name
  const hashed = new Set(HASHED_FIELDS[name] ?? [])
  const clear = new Set(CLEAR_FIELDS[name] ?? [])
  const info = (index: DBCoreIndex): IndexInfo => {
    const fields = fieldsOf(index.keyPath)
    const h = fields.map((f) => hashed.has(f))
    for (const f of fields) if (!hashed.has(f)) clear.add(f)
    return { index, fields, hashed: h, anyHashed: h.some(Boolean) }
  }
  const pk = info(table.schema.primaryKey)
  const indexes = new Map<string | null, IndexInfo>([[null, pk]])
  for (const index of table.schema.indexes) indexes.set(index.name, info(index))
  return {
    name,
    plain: PLAIN_TABLES.has(name),
    hashed,
    clear,
    context: utf8.encode(`engram-at-rest/v1\u0000${name}`),
    pk,
    indexes,
    anyHashed: [...indexes.values()].some((i) => i.anyHashed),
  }
}

/** Hashes a value of a hashed field (each entry of an array: multi-entry tags). */
function hashValue(form: Form, domain: string, value: unknown): unknown {
  if (form === 'plain') return value
  if (typeof value === 'string') return HASH_WHEN[domain] && !HASH_WHEN[domain](value) ? value : form.hashField(domain, value)
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' && (!HASH_WHEN[domain] || HASH_WHEN[domain](v)) ? form.hashField(domain, v) : v))
  return value
}

/** A row as stored, written with generation `gen`. */
export function encodeRow(spec: TableSpec, row: Record<string, unknown>, gen: Generation): Record<string, unknown> {
  if (spec.plain || row === null || typeof row !== 'object') return row
  const out: Record<string, unknown> = {}
  const packed: Record<string, unknown> = {}
  let sealed = false
  for (const field in row) {
    const value = row[field]
    if (spec.clear.has(field)) {
      out[field] = value
      continue
    }
    if (value === undefined) continue
    if (spec.hashed.has(field) && staysClear(spec, field, value)) {
      out[field] = value
      continue
    }
    packed[field] = value
    sealed = true
    if (spec.hashed.has(field)) out[field] = hashValue(gen, `${spec.name}.${field}`, value)
  }
  if (sealed) out[SEALED] = gen.seal(pack(packed), spec.context)
  return out
}

/** The plain row of a stored one (a row without a sealed field is returned as it is: plain tables, rows `enable` has not reached yet). */
export function decodeRow(spec: TableSpec, raw: unknown, keys: KeyState): unknown {
  if (raw === null || typeof raw !== 'object') return raw
  const stored = raw as Record<string, unknown>
  const sealed = stored[SEALED]
  if (sealed === undefined) return raw
  const gen = generationOf(sealed)
  const g = gen === undefined ? undefined : keys.byGen.get(gen)
  if (!g) {
    throw new MemoryError(
      'crypto',
      gen === undefined
        ? `A stored ${spec.name} row is damaged`
        : `A stored ${spec.name} row was encrypted with a key this connection does not have (the store was rekeyed elsewhere?): reopen it`,
    )
  }
  const fields = unpack(g.open(sealed as Uint8Array, spec.context))
  const out: Record<string, unknown> = {}
  // Hashed fields come back from the sealed fields (which hold every field that was hashed).
  for (const field in stored) if (field !== SEALED) out[field] = stored[field]
  return Object.assign(out, fields)
}

/** True for a value of a hashed field that stays clear (HASH_WHEN): a string, or an array of strings, none of which is hashed. */
function staysClear(spec: TableSpec, field: string, value: unknown): boolean {
  const when = HASH_WHEN[`${spec.name}.${field}`]
  if (when === undefined) return false
  if (typeof value === 'string') return !when(value)
  return Array.isArray(value) && value.every((v) => typeof v === 'string' && !when(v))
}

/** True when a stored row is sealed with `gen` (or, for a table kept plain, always). */
export function isCurrent(spec: TableSpec, raw: Record<string, unknown>, gen: number): boolean {
  if (spec.plain) return true
  const sealed = raw[SEALED]
  if (sealed === undefined) {
    // A row with nothing to seal (all its fields are clear) is as good as current.
    return Object.keys(raw).every((f) => spec.clear.has(f) || (spec.hashed.has(f) && staysClear(spec, f, raw[f])))
  }
  return generationOf(sealed) === gen
}

/** A key of `info`'s index written in `form`. */
function mapKey(spec: TableSpec, info: IndexInfo, key: unknown, form: Form): unknown {
  if (!info.anyHashed || form === 'plain') return key
  if (info.fields.length === 1 && !info.index.compound) return hashValue(form, `${spec.name}.${info.fields[0]}`, key)
  if (!Array.isArray(key)) return key
  return key.map((c, i) => (info.hashed[i] ? hashValue(form, `${spec.name}.${info.fields[i]}`, c) : c))
}

function sameKey(a: unknown, b: unknown): boolean {
  try {
    return cmp(a, b) === 0
  } catch {
    return false
  }
}

function inRange(key: unknown, range: DBCoreKeyRange): boolean {
  switch (range.type) {
    case 1:
      return sameKey(key, range.lower)
    case 3:
      return true
    case 4:
      return false
    default: {
      if (range.lower !== undefined) {
        const c = cmp(key, range.lower)
        if (c < 0 || (c === 0 && range.lowerOpen)) return false
      }
      if (range.upper !== undefined) {
        const c = cmp(key, range.upper)
        if (c > 0 || (c === 0 && range.upperOpen)) return false
      }
      return true
    }
  }
}

/** Dexie's own promises: they keep the transaction's zone across every step (native ones may lose it in long chains). */
const all = <T>(promises: PromiseLike<T>[]): PromiseLike<T[]> => Dexie.Promise.all(promises) as unknown as PromiseLike<T[]>
const resolved = <T>(value: T): PromiseLike<T> => Dexie.Promise.resolve(value) as unknown as PromiseLike<T>

const ANY: DBCoreKeyRange = { type: 3, lower: undefined, upper: undefined }

/** How a range over an index is asked of the stored rows. */
interface Plan {
  /** One range per form of the hashed keys. */
  ranges: DBCoreKeyRange[]
  /** The ranges select exactly the rows of the plain range (hashed components are all fixed by it). */
  native: boolean
  /** Rows come back in the order the plain index would give them: limits can go down. */
  faithful: boolean
}

/** One entry of a result, in plain terms. */
interface Entry {
  key: unknown
  pk: unknown
  row: unknown
  raw: Record<string, unknown>
}

/** A cursor over entries already read and ordered (ranges over hashed fields). */
function arrayCursor(trans: DBCoreTransaction, entries: readonly Entry[], values: boolean): DBCoreCursor {
  let at = -1
  let onNext: (() => void) | undefined
  let resolve: ((value: unknown) => void) | undefined
  let reject: ((error: unknown) => void) | undefined
  let stopped = false
  let scheduled = false
  const step = () => {
    scheduled = false
    if (stopped) return
    if (at >= entries.length) {
      cursor.done = true
      finish(undefined)
      return
    }
    try {
      onNext!()
    } catch (error) {
      fail(error)
    }
  }
  const schedule = () => {
    if (scheduled) return
    scheduled = true
    // Like IndexedDB, the next entry comes asynchronously (a Dexie promise: still inside the transaction's zone).
    void Dexie.Promise.resolve().then(step)
  }
  const finish = (value: unknown) => {
    stopped = true
    resolve?.(value)
  }
  const fail = (error: unknown) => {
    stopped = true
    reject?.(error)
  }
  const cursor = {
    trans,
    done: false,
    get key() {
      return entries[at]?.key
    },
    get primaryKey() {
      return entries[at]?.pk
    },
    get value() {
      return values ? entries[at]?.row : undefined
    },
    continue(key?: unknown) {
      at++
      if (key !== undefined) while (at < entries.length && cmp(entries[at]!.key, key) < 0) at++
      schedule()
    },
    continuePrimaryKey(key: unknown, primaryKey: unknown) {
      at++
      while (at < entries.length && (cmp(entries[at]!.key, key) < 0 || (cmp(entries[at]!.key, key) === 0 && cmp(entries[at]!.pk, primaryKey) < 0))) at++
      schedule()
    },
    advance(count: number) {
      at += count
      schedule()
    },
    start(callback: () => void) {
      onNext = callback
      const done = new Dexie.Promise((res, rej) => {
        resolve = res
        reject = rej
      })
      at = 0
      schedule()
      return done
    },
    stop(value?: unknown) {
      finish(value)
    },
    next() {
      let first = true
      return cursor
        .start(() => {
          if (first) {
            first = false
            cursor.stop()
          }
        })
        .then(() => cursor as unknown as DBCoreCursor)
    },
    fail(error: Error) {
      fail(error)
    },
  }
  return cursor as unknown as DBCoreCursor
}

/** A stored cursor whose values are decrypted as they are read (indexes without hashed fields). */
function decodingCursor(cursor: DBCoreCursor, decode: (raw: unknown) => unknown): DBCoreCursor {
  let lastRaw: unknown
  let lastPlain: unknown
  const wrapper: DBCoreCursor = {
    get trans() {
      return cursor.trans
    },
    get key() {
      return cursor.key
    },
    get primaryKey() {
      return cursor.primaryKey
    },
    get value() {
      const raw = cursor.value
      if (raw !== lastRaw) {
        lastRaw = raw
        lastPlain = decode(raw)
      }
      return lastPlain
    },
    get done() {
      return cursor.done
    },
    continue: (key?: unknown) => cursor.continue(key),
    continuePrimaryKey: (key: unknown, primaryKey: unknown) => cursor.continuePrimaryKey(key, primaryKey),
    advance: (count: number) => cursor.advance(count),
    start: (onNext: () => void) => cursor.start(onNext),
    stop: (value?: unknown) => cursor.stop(value),
    next: () => cursor.next().then(() => wrapper),
    fail: (error: Error) => cursor.fail(error),
  }
  return wrapper
}

/**
 * The table as the store sees it: `down` is the table as stored. `keys()`
 * gives the generations in force (it changes when `enable` or `rekey` starts
 * or ends).
 */
export function encryptedTable(down: DBCoreTable, keys: () => KeyState): DBCoreTable {
  const spec = tableSpec(down)
  if (spec.plain) return down
  const pkInfo = spec.pk
  const extractPk = down.schema.primaryKey.extractKey!
  const decode = (raw: unknown) => decodeRow(spec, raw, keys())
  const forms = (): Form[] => {
    const k = keys()
    return k.previous === undefined ? [k.current] : [k.current, k.previous]
  }
  const infoOf = (index: DBCoreIndex): IndexInfo => spec.indexes.get(index.isPrimaryKey ? null : index.name) ?? spec.pk

  /** Keys of the primary key in every live form (current first). */
  const pkForms = (key: unknown): unknown[] => {
    if (!pkInfo.anyHashed) return [key]
    const out: unknown[] = []
    for (const f of forms()) {
      const mapped = mapKey(spec, pkInfo, key, f)
      if (!out.some((o) => sameKey(o, mapped))) out.push(mapped)
    }
    return out
  }

  function plan(info: IndexInfo, range: DBCoreKeyRange): Plan {
    // Among equal index keys IndexedDB orders by primary key; a hashed primary key breaks that order.
    const tiesFaithful = info.index.isPrimaryKey || !pkInfo.anyHashed
    const fs = forms()
    if (!info.anyHashed) return { ranges: [range], native: true, faithful: tiesFaithful }
    if (range.type === 4) return { ranges: [range], native: true, faithful: true }
    if (range.type === 3) return { ranges: [ANY], native: true, faithful: false }
    const n = info.fields.length
    let exact = 0 // leading components that lower and upper fix
    if (range.type === 1) exact = n
    else if (range.lower !== undefined && range.upper !== undefined) {
      if (!info.index.compound) exact = sameKey(range.lower, range.upper) ? 1 : 0
      else {
        const lo = range.lower as unknown[]
        const up = range.upper as unknown[]
        while (exact < n && exact < lo.length && exact < up.length && sameKey(lo[exact], up[exact])) exact++
      }
    }
    if (info.hashed.every((h, i) => !h || i < exact)) {
      const ranges = fs.map((f) => ({ ...range, lower: mapKey(spec, info, range.lower, f), upper: mapKey(spec, info, range.upper, f) }))
      return { ranges, native: true, faithful: tiesFaithful && fs.length === 1 }
    }
    // A range over a hashed component: read the part of the index the exact prefix fixes, filter and order in plain terms.
    if (exact === 0 || !info.index.compound) return { ranges: [ANY], native: false, faithful: false }
    const prefix = (range.lower as unknown[]).slice(0, exact)
    const rest = n - exact
    const ranges = fs.map((f) => {
      const mapped = (mapKey(spec, info, [...prefix, ...Array<unknown>(rest).fill(undefined)], f) as unknown[]).slice(0, exact)
      return {
        type: 2,
        lower: [...mapped, ...Array<unknown>(rest).fill(-Infinity)],
        upper: [...mapped, ...Array.from({ length: rest }, () => maxKey())],
        lowerOpen: false,
        upperOpen: false,
      } as DBCoreKeyRange
    })
    // Duplicate forms (a prefix without hashed components) read once.
    const unique = ranges.filter((r, i) => ranges.findIndex((o) => sameKey(o.lower, r.lower)) === i)
    return { ranges: unique, native: false, faithful: false }
  }

  /** Reads every stored row of `p`'s ranges and returns the plain entries in `range`, ordered as the plain index would. */
  function entries(trans: DBCoreTransaction, info: IndexInfo, range: DBCoreKeyRange, p: Plan, reverse: boolean, unique: boolean): PromiseLike<Entry[]> {
    return all(p.ranges.map((r) => down.query({ trans, values: true, query: { index: info.index, range: r } }))).then((results) => {
      const multi = info.index.multiEntry === true
      const seen = multi ? new Set<string>() : undefined
      const out: Entry[] = []
      for (const { result } of results) {
        for (const raw of result as Record<string, unknown>[]) {
          if (seen) {
            const id = JSON.stringify(extractPk(raw))
            if (seen.has(id)) continue
            seen.add(id)
          }
          const row = decode(raw) as Record<string, unknown>
          const key = info.index.extractKey!(row)
          const pk = extractPk(row)
          if (multi && Array.isArray(key)) {
            for (const k of new Set(key)) if (inRange(k, range)) out.push({ key: k, pk, row, raw })
          } else if (key !== undefined && inRange(key, range)) out.push({ key, pk, row, raw })
        }
      }
      out.sort((a, b) => cmp(a.key, b.key) || cmp(a.pk, b.pk))
      if (reverse) out.reverse()
      if (!unique) return out
      return out.filter((e, i) => i === 0 || cmp(out[i - 1]!.key, e.key) !== 0)
    })
  }

  function query(req: DBCoreQueryRequest): Promise<DBCoreQueryResponse> {
    const info = infoOf(req.query.index)
    const p = plan(info, req.query.range)
    const direction = req.direction ?? 'next'
    if (p.faithful && p.ranges.length === 1) {
      const wantValues = req.values === true || pkInfo.anyHashed
      return down.query({ ...req, values: wantValues, query: { index: req.query.index, range: p.ranges[0]! } }).then(({ result }) => {
        if (!wantValues) return { result }
        const rows = result.map(decode)
        return { result: req.values ? rows : rows.map((r) => extractPk(r)) }
      })
    }
    return entries(req.trans, info, req.query.range, p, direction.startsWith('prev'), direction.endsWith('unique')).then((list) => {
      const limited = req.limit !== undefined && req.limit < list.length ? list.slice(0, req.limit) : list
      return { result: limited.map((e) => (req.values ? e.row : e.pk)) }
    }) as Promise<DBCoreQueryResponse>
  }

  function mutate(req: DBCoreMutateRequest): Promise<DBCoreMutateResponse> {
    const k = keys()
    if (req.type === 'add' || req.type === 'put') {
      // Every sealed table has inbound keys: the keys Dexie's hooks add to a put (a table with a
      // 'creating' hook) are the rows' own, and the sealed row carries its keyed form instead.
      const { keys: _inbound, ...plain } = req
      const values = req.values.map((v) => encodeRow(spec, v, k.current))
      // A row of the generation being migrated from would shadow (or duplicate) the new one.
      const old = pkInfo.anyHashed && k.previous !== undefined && req.type === 'put' ? req.values.flatMap((v) => pkForms(extractPk(v)).slice(1)) : []
      const write = () => down.mutate({ ...plain, values } as DBCoreMutateRequest)
      // Straight to the store when there is nothing to clear: one step of Dexie's promises less per write.
      const written = old.length > 0 ? down.mutate({ trans: req.trans, type: 'delete', keys: old }).then(write) : write()
      if (!pkInfo.anyHashed) return written
      // The keys written are keyed hashes: the caller gets its own.
      return written.then((res) => {
        const results = req.values.map((v, i) => (res.failures[i] ? undefined : extractPk(v)))
        return { ...res, results, lastResult: results[results.length - 1] }
      })
    }
    if (req.type === 'delete') {
      if (!pkInfo.anyHashed) return down.mutate(req)
      return down
        .mutate({ ...req, keys: req.keys.flatMap(pkForms) })
        .then((res) => ({ ...res, numFailures: 0, failures: {}, results: req.keys, lastResult: req.keys[req.keys.length - 1] }))
    }
    const p = plan(pkInfo, req.range)
    if (p.native) {
      return p.ranges.reduce<PromiseLike<DBCoreMutateResponse | undefined>>(
        (chain, range) => chain.then(() => down.mutate({ ...req, range })),
        resolved(undefined),
      ) as Promise<DBCoreMutateResponse>
    }
    return entries(req.trans, pkInfo, req.range, p, false, false).then((list) =>
      down.mutate({ trans: req.trans, type: 'delete', keys: list.map((e) => extractPk(e.raw)) }),
    ) as Promise<DBCoreMutateResponse>
  }

  return {
    ...down,
    mutate,
    get(req) {
      const candidates = pkForms(req.key)
      if (candidates.length === 1) return down.get({ ...req, key: candidates[0] }).then(decode)
      return down.getMany({ trans: req.trans, keys: candidates }).then((found) => decode(found.find((r) => r !== undefined)))
    },
    getMany(req) {
      if (!pkInfo.anyHashed) return down.getMany(req).then((rows) => rows.map(decode))
      const perKey = req.keys.map(pkForms)
      return down.getMany({ ...req, keys: perKey.flat() }).then((found) => {
        let at = 0
        return perKey.map((candidates) => {
          const slice = found.slice(at, (at += candidates.length))
          return decode(slice.find((r) => r !== undefined))
        })
      })
    },
    query,
    openCursor(req) {
      const info = infoOf(req.query.index)
      if (!info.anyHashed && !pkInfo.anyHashed) {
        return down.openCursor(req).then((cursor) => cursor && (req.values === false ? cursor : decodingCursor(cursor, decode)))
      }
      const p = plan(info, req.query.range)
      return entries(req.trans, info, req.query.range, p, req.reverse === true, req.unique === true).then((list) =>
        list.length === 0 ? null : arrayCursor(req.trans, list, req.values !== false),
      ) as Promise<DBCoreCursor | null>
    },
    count(req) {
      const info = infoOf(req.query.index)
      const p = plan(info, req.query.range)
      if (p.native) {
        return all(p.ranges.map((range) => down.count({ ...req, query: { index: req.query.index, range } }))).then((counts) =>
          counts.reduce((a, b) => a + b, 0),
        ) as Promise<number>
      }
      return entries(req.trans, info, req.query.range, p, false, false).then((list) => list.length) as Promise<number>
    },
  }
}
