import type { Memory } from '../compose/memory.js'
import type { Transaction } from 'dexie'
import type { StoreContext } from './store-context.js'

declare const moduleContext: unique symbol

/** The store's internals as a module receives them: opaque outside Engram's own modules. */
export interface ModuleContext {
  readonly [moduleContext]: true
}

/** The store's internals behind a {@link ModuleContext} (for Engram's own modules). */
export function storeOf(ctx: ModuleContext): StoreContext {
  return ctx as unknown as StoreContext
}

/** The namespaces every store has, whatever modules it was composed from. */
export type BaseKeys =
  | 'appId'
  | 'userId'
  | 'deviceId'
  | 'mode'
  | 'projects'
  | 'changes'
  | 'status'
  | 'sync'
  | 'encryption'
  | 'stats'
  | 'export'
  | 'persist'
  | 'close'
  | 'closed'

/** What sync needs of a store: its base (any composition of modules can sync). */
export type SyncableMemory = Pick<Memory, BaseKeys>

/** The namespaces that modules add. */
export type ModuleKeys = Exclude<keyof Memory, BaseKeys>

/**
 * A part of the store an app opts into: the tables it owns, the namespaces it
 * adds, and what it needs from other modules. Made by a factory that takes the
 * module's own typed options, e.g. `searchModule({ embedder })`.
 */
export interface MemoryModule<K extends ModuleKeys = ModuleKeys> {
  /** Unique among a store's modules. */
  readonly name: string
  /** Tables the module reads and writes (all tables are declared by the schema, so opening with fewer modules never migrates). */
  readonly tables: readonly string[]
  /** What the database needs from the module when it opens (the search module rebuilds its index on a schema upgrade). */
  readonly database?: { rebuildIndex?: (tx: Transaction) => Promise<void> }
  /** Runs once the database is open, before any namespace is used (e.g. finishing work an upgrade left). */
  open?(ctx: ModuleContext): Promise<void>
  /** Names of the modules it needs, listed before it or not. */
  readonly requires?: readonly string[]
  /** Runs before any module creates its namespaces (e.g. the search module installs the text index every writer uses). */
  install?(ctx: ModuleContext): void
  /** Builds the namespaces; `memory` already holds the base and every module created before this one. */
  create(ctx: ModuleContext, memory: Partial<Memory>): Pick<Memory, K>
}

/** Any module, whatever namespaces it adds. */
// biome-ignore lint/suspicious/noExplicitAny: a module's namespace keys are only known to its own factory
export type AnyModule = MemoryModule<any>

/** The namespaces a list of modules adds. */
export type KeysOf<M extends readonly AnyModule[]> = KeysOfModule<M[number]>
/** The namespaces one module adds (distributes over a union of modules). */
export type KeysOfModule<T> = T extends MemoryModule<infer K> ? K : never

/** A store composed from the base and the modules `M`. */
export type ComposedMemory<M extends readonly AnyModule[]> = Pick<Memory, BaseKeys | KeysOf<M>>
