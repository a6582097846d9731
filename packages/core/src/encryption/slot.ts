import type { DBCore, DBCoreKeyRange, DBCoreTable, DBCoreTransaction, Dexie, Middleware } from 'dexie'
import type { Analyzer } from '../search/analysis/analyzer.js'

/*
 * The part of at-rest encryption every store carries (a few lines, no crypto):
 * a DBCore middleware that does nothing until the encryption code (loaded with
 * a dynamic import only when `encryption` is used) installs itself, and the
 * analyzer wrapper through which the search index gets keyed term hashes.
 */

/** What the encryption code plugs into {@link CryptoSlot}. */
export interface EncryptedTables {
  /** The table as the store sees it: rows encrypted on the way down, decrypted on the way up. */
  table(name: string, down: DBCoreTable): DBCoreTable
  /** Analyzer output → keyed hashes of the terms (the search index stores and queries only those). */
  hashTerms(terms: string[]): string[]
}

/**
 * What the move of a store into a fresh database (database-move.ts, after `enable` and
 * `rekey`) plugs into the middleware: it sees every transaction and write, and, once it
 * switched over, opens every transaction on the new database. The store's Dexie instance
 * keeps its name; the rows live in `target`.
 */
export interface MoveHooks {
  /** The database transactions open on, once the move switched over. */
  target?: IDBDatabase
  /** Called with every transaction the store opens (before Dexie uses it). */
  opened?(trans: IDBTransaction, mode: IDBTransactionMode): void
  /** Called after every successful write with the table and the keys as stored, or the range it deleted. */
  written?(table: string, keys: readonly unknown[] | undefined, range: DBCoreKeyRange | undefined, trans: DBCoreTransaction): void
}

/** Per store: the installed encryption, if any. */
export interface CryptoSlot {
  impl: EncryptedTables | undefined
  /**
   * Unlocks another database of the app (`adopt`) whose middleware uses `slot`, with this store's key.
   * @throws MemoryError `crypto` when its key is another one.
   */
  unlockOther?: (db: Dexie, slot: CryptoSlot) => Promise<void>
  /** Transactions that read and write rows as stored (the migration of `enable` and `rekey`). */
  readonly raw: WeakSet<object>
  /** Set while a move into a fresh database runs, and after it switched over. */
  move?: MoveHooks
}

/** A slot with nothing installed. */
export function createCryptoSlot(): CryptoSlot {
  return { impl: undefined, raw: new WeakSet() }
}

/**
 * The middleware every store registers before it opens. Lowest in the stack
 * (below Dexie's own), so everything above it — hooks, virtual indexes, the
 * store's code — sees plain rows and plain keys.
 */
export function cryptoMiddleware(slot: CryptoSlot): Middleware<DBCore> {
  return {
    stack: 'dbcore',
    name: 'EngramAtRestEncryption',
    level: -2,
    create(down) {
      return {
        ...down,
        transaction(stores, mode, options) {
          const move = slot.move
          const target = move?.target
          const trans = target
            ? (target.transaction(stores, mode, options as IDBTransactionOptions) as unknown as DBCoreTransaction)
            : down.transaction(stores, mode, options)
          move?.opened?.(trans as unknown as IDBTransaction, mode)
          return trans
        },
        table(name) {
          const plain = watched(name, down.table(name), slot)
          let wrapped: DBCoreTable = plain
          let wrappedFor: EncryptedTables | undefined
          const of = (trans: DBCoreTransaction): DBCoreTable => {
            const impl = slot.impl
            if (impl === undefined || slot.raw.has(trans)) return plain
            if (wrappedFor !== impl) {
              wrapped = impl.table(name, plain)
              wrappedFor = impl
            }
            return wrapped
          }
          return {
            ...plain,
            mutate: (req) => of(req.trans).mutate(req),
            get: (req) => of(req.trans).get(req),
            getMany: (req) => of(req.trans).getMany(req),
            query: (req) => of(req.trans).query(req),
            openCursor: (req) => of(req.trans).openCursor(req),
            count: (req) => of(req.trans).count(req),
          }
        },
      }
    },
  }
}

/** `table` reporting its successful writes, as stored, to a running move. */
function watched(name: string, table: DBCoreTable, slot: CryptoSlot): DBCoreTable {
  return {
    ...table,
    mutate(req) {
      const done = table.mutate(req)
      const written = slot.move?.written
      if (!written) return done
      return done.then((res) => {
        written(name, req.type === 'deleteRange' ? undefined : res.results, req.type === 'deleteRange' ? req.range : undefined, req.trans)
        return res
      })
    },
  }
}

/** `analyzer` whose terms become keyed hashes while encryption is installed (the same analyzer otherwise). */
export function keyedAnalyzer(analyzer: Analyzer, slot: CryptoSlot | undefined): Analyzer {
  if (!slot) return analyzer
  return {
    terms(text) {
      const terms = analyzer.terms(text)
      const impl = slot.impl
      return impl ? impl.hashTerms(terms) : terms
    },
  }
}

/** The meta row that marks an encrypted store: the wrapped keys, which are the key check (`meta` is never encrypted). */
export const ENCRYPTION_META_KEY = 'encryption'
