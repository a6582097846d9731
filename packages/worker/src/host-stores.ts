import * as Comlink from 'comlink'
import {
  reportError,
  databaseName,
  openMemory,
  type Embedder,
  type Extractor,
  type BackgroundExtractor,
  type MemoryView,
  type MemoryOperation,
  type ObservationInput,
  type ReflectionInput,
  type Memory,
  type MemoryOptions,
  type Summarizer,
} from '@engram/core'
import { verifyAtRestKey } from '@engram/core/internal'
import type { OpenRequest, StartSync, SyncHandle } from './api.js'
import { relayChanges, type CrossTabChanges } from './cross-tab-changes.js'
import { electLeader, type Election } from './election.js'
import type { LockManagerLike } from './web-locks.js'
import { createPluginPool, type PluginPool } from './plugin-pool.js'
import { createStatusBoard, type StatusBoard } from './status-board.js'

/** One open store in a host, shared by every connection (tab) that opened it. */
export interface HostStore {
  readonly key: string
  readonly memory: Memory
  readonly pool: PluginPool
  refs: number
  election: Election | undefined
  sync: SyncHandle | undefined
  /** Per-project sync status: from this host's sync when it leads, from the leading tab's host otherwise. */
  readonly board: StatusBoard
  /** Batches committed by other tabs' hosts on the same database. */
  readonly otherTabs: CrossTabChanges | undefined
}

/** Host-wide settings every store of a host is opened with. */
export interface StoreSettings {
  memory: Partial<Pick<MemoryOptions, 'indexedDB' | 'IDBKeyRange' | 'tokenizer' | 'now' | 'pricing'>>
  startSync: () => Promise<StartSync>
  locks: LockManagerLike | undefined
}

/** The stores of one host, opened once and reference-counted. */
export interface HostStores {
  /** Opens the store of `request`, or joins it when it is already open. */
  acquire(request: OpenRequest): Promise<HostStore>
  /** Drops one reference; the last one stops sync and closes the database. */
  release(store: HostStore): void
  /** Starts the sync election for a store (once; later requests join it). */
  ensureSync(store: HostStore, sync: NonNullable<OpenRequest['sync']>): void
  closeAll(): void
}

/** Creates the store registry of a host. */
export function createHostStores(settings: StoreSettings): HostStores {
  const stores = new Map<string, Promise<HostStore>>()

  async function open(request: OpenRequest): Promise<HostStore> {
    const pool = createPluginPool()
    const memory = await openMemory({
      ...settings.memory,
      appId: request.appId,
      userId: request.userId,
      ...(request.encryption !== undefined ? { encryption: request.encryption } : {}),
      ...(request.embedderDimensions ? { embedder: remoteEmbedder(pool, request.embedderDimensions, request.embedderModel) } : {}),
      ...(request.summarizer ? { summarizer: remoteSummarizer(pool) } : {}),
      ...(request.extractor
        ? { extractor: request.backgroundExtractor ? remoteBackgroundExtractor(pool, request.backgroundExtractor) : remoteExtractor(pool) }
        : {}),
    })
    const key = databaseName(request.appId, request.userId)
    return {
      key,
      memory,
      pool,
      refs: 0,
      election: undefined,
      sync: undefined,
      board: createStatusBoard(`engram-sync-status:${key}`),
      otherTabs: relayChanges(memory, `engram-changes:${key}`),
    }
  }

  return {
    async acquire(request) {
      // Checked here too: a connection joining an open store does not reach openMemory's check (the check loads for a connection that passes the option).
      if (request.encryption !== undefined) {
        const check: typeof import('./encryption-check.js') = await import('./encryption-check.js')
        check.checkEncryptionOption(request.encryption)
      }
      const key = databaseName(request.appId, request.userId)
      let pending = stores.get(key)
      const joining = pending !== undefined
      if (!pending) {
        pending = open(request)
        stores.set(key, pending)
        pending.catch(() => stores.delete(key))
      }
      const store = await pending
      // A connection joining a store another one opened shows its key as if it opened the store itself.
      if (joining) await verifyAtRestKey(store.memory, request.encryption?.key)
      store.refs++
      return store
    },
    release(store) {
      if (--store.refs > 0) return
      stores.delete(store.key)
      store.election?.resign()
      store.board.close()
      store.otherTabs?.close()
      store.memory.close()
    },
    ensureSync(store, sync) {
      if (store.election) return
      store.election = electLeader(`engram-sync:${store.key}`, {
        locks: settings.locks,
        onLead: () => leadSync(store, sync, settings.startSync),
      })
    },
    closeAll() {
      for (const pending of stores.values())
        void pending.then(
          (s) => {
            s.refs = 1
            this.release(s)
          },
          () => {},
        )
    },
  }
}

function leadSync(store: HostStore, { url, encryption }: NonNullable<OpenRequest['sync']>, load: () => Promise<StartSync>): () => void {
  let stopped = false
  let offStatus: (() => void) | undefined
  void load()
    .then((startSync) => {
      if (stopped || store.memory.closed) return
      const handle = startSync(store.memory, { url, token: () => store.pool.call('token'), ...(encryption ? { encryption } : {}) })
      store.sync = handle
      offStatus = store.board.lead(handle)
    })
    .catch((error: unknown) => reportError(error))
  return () => {
    stopped = true
    offStatus?.()
    const handle = store.sync
    store.sync = undefined
    if (handle)
      void Promise.resolve()
        .then(() => handle.close())
        .catch(() => {})
  }
}

function remoteEmbedder(pool: PluginPool, dimensions: number, model: string | undefined): Embedder {
  const embedder: Embedder = { dimensions, embed: (texts) => pool.call('embed', texts) }
  if (typeof model === 'string') embedder.model = model
  return embedder
}

function remoteSummarizer(pool: PluginPool): Summarizer {
  return { summarize: (texts, maxTokens) => pool.call('summarize', texts, maxTokens) }
}

/** The UI thread's background extractor: its model calls run there, the queue and the writes here. */
function remoteBackgroundExtractor(pool: PluginPool, spec: NonNullable<OpenRequest['backgroundExtractor']>): BackgroundExtractor {
  const view = <V extends object>(v: V) => Comlink.proxy(Object.create(v) as V)
  return {
    extract: (exchange, v) => pool.call('extract', exchange, view(v)),
    ...(spec.observe ? { observe: (input: ObservationInput, v: MemoryView) => pool.call('observe', input, view(v)) } : {}),
    ...(spec.reflect ? { reflect: (input: ReflectionInput, v: MemoryView) => pool.call('reflect', input, view(v)) } : {}),
    ...(spec.settings ? { settings: spec.settings } : {}),
  }
}

function remoteExtractor(pool: PluginPool): Extractor {
  // The view's methods are called back from the UI thread through their own proxy.
  return (exchange, view) => pool.call('extract', exchange, Comlink.proxy(Object.create(view) as typeof view)) as Promise<MemoryOperation[]>
}
