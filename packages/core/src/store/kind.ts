import type { DBCore, Middleware, Transaction } from 'dexie'

/*
 * What the store must know of one memory kind, declared once in the kind's
 * folder (`<kind>/kind.ts`). The catalog (catalog/) builds every central list
 * from these manifests: the schema's version ladder, the change feed's kinds,
 * the mirrored kinds, the dump's tables, the at-rest encryption's fields and
 * the namespaces a worker client forwards. Nothing here imports a kind.
 */

/** A table's Dexie index spec at each schema version that changed it (`null` drops the table). */
export type TableVersions = { readonly [version: number]: string | null }

/** How a kind's records travel to other devices, when they do. */
export interface MirroredDecl {
  /** `always` in every synced project; `conversations` only where a project syncs its conversations. */
  readonly when: 'always' | 'conversations'
  /** The document its records travel in: the project's, or one per session. */
  readonly document: 'project' | 'session'
  /** Loads the kind's synced descriptor (replication, import and adoption load it on use). */
  readonly descriptor: () => Promise<unknown>
}

/** The declaration of one memory kind (or of a part of the store with tables of its own, such as search). */
export interface KindManifest {
  /** The kind's name: its folder, and its change kind or mirrored kind where it has one. */
  readonly name: string
  /** Other kinds whose code or tables it uses (a kind imports only store/, these kinds, and search's document interface). */
  readonly uses?: readonly string[]
  /** The tables it owns, with their index specs by schema version. */
  readonly tables: { readonly [table: string]: TableVersions }
  /** Upgrades of its own tables, run when the database moves to that version. */
  readonly upgrades?: { readonly [version: number]: (tx: Transaction) => Promise<void> }
  /** DBCore middleware over its tables (e.g. completing rows older writers left incomplete). */
  readonly middleware?: readonly Middleware<DBCore>[]
  /** The `Change.kind`s its writes emit. */
  readonly changeKinds: readonly string[]
  /** The members of `Memory` it adds (namespaces and functions). */
  readonly namespaces: readonly string[]
  /** Present when its records are mirrored to other devices. */
  readonly mirrored?: MirroredDecl
  /** What a dump holds of it: its tables, and which of them scope by a `projectId` field. */
  readonly dump?: { readonly tables: readonly string[]; readonly projectRows?: readonly string[] }
  /** At rest: indexed fields stored as keyed hashes, fields kept clear, and tables stored as they are. */
  readonly encryption?: {
    readonly hashed?: { readonly [table: string]: readonly string[] }
    readonly clear?: { readonly [table: string]: readonly string[] }
    readonly plain?: readonly string[]
  }
  /** The kinds of search documents (`Hit.kind`) its records produce. */
  readonly searchDocs?: readonly string[]
}

/**
 * Declares a kind (keeps its literal types, so lists built from manifests are typed by them).
 *
 * @example
 * export const limitationsKind = defineKind({ name: 'limitations', tables: { limitations: { 3: 'key, status' } }, changeKinds: ['limitations'], namespaces: ['limitations'] })
 */
export function defineKind<const M extends KindManifest>(manifest: M): M {
  return manifest
}

/** The mirrored kinds as the store's writes look them up (built by the catalog from the manifests). */
export interface MirroredSets {
  /** Mirrored in every synced project. */
  readonly always: ReadonlySet<string>
  /** Mirrored only where a project syncs its conversations. */
  readonly conversations: ReadonlySet<string>
}
