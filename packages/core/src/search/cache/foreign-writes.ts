import type { ChangeKind } from '../../store/change-feed.js'
import type { StoreContext } from '../../store/store-context.js'
import type { SearchEngine } from '../types.js'

/*
 * Writes made through another connection to the same database (another tab's worker, a second
 * store in one worker) reach IndexedDB but not this connection's memory: the index's unmerged
 * tail, its decoded posting lists, the query cache and the facts view would keep answering as
 * if they never happened. So every store posts a small notice after each committed write that
 * touches what searches and contexts read (and after each merge of the index), and a store that
 * receives one drops what it holds: the index state reloads on the next query, and the caches
 * built over it forget the projects named.
 */

/** Kinds of change whose writes searches and contexts read (the index, hit records, turn windows, facts). */
const NOTICED = new Set<ChangeKind>(['messages', 'sessions', 'facts', 'summaries', 'passages', 'entities', 'relations', 'observations', 'projects'])

/** What another connection committed: the projects it wrote and the kinds it wrote in each (none for a merge). */
export interface WriteNotice {
  projects: Record<string, ChangeKind[]>
  /** True after a merge of the index, which rewrites posting blocks of any project. */
  merged?: boolean
}

/** The notices of other connections to this store's database. */
export interface ForeignWrites {
  /** Calls `listener` with each notice, after the index state was dropped; returns the unsubscribe. */
  subscribe(listener: (notice: WriteNotice) => void): () => void
}

/** A channel as the two transports offer it. */
interface Port {
  postMessage(notice: WriteNotice): void
  onmessage: ((event: { data: WriteNotice }) => void) | null
  close(): void
}

const started = new WeakMap<StoreContext, ForeignWrites>()

/** The notices of other connections (undefined when no channel exists here, or before the search module started them). */
export function foreignWritesOf(ctx: StoreContext): ForeignWrites | undefined {
  return started.get(ctx)
}

/**
 * Starts posting this store's write notices and receiving those of the other connections to its
 * database, until the store closes. A store on the global IndexedDB talks over a
 * `BroadcastChannel` (other tabs and workers); one on a factory passed to `openMemory` talks to
 * the stores opened on that same factory object (as two tabs on one fake-indexeddb would). Where
 * neither exists (no `BroadcastChannel`), nothing is posted or received. `onNotice` (tests) is
 * called after a notice was handled. A store whose composition has no search module starts them
 * when its first context is built (context/facts-view.ts).
 */
export function startForeignWrites(ctx: StoreContext, engine: SearchEngine | undefined, onNotice?: (notice: WriteNotice) => void): ForeignWrites | undefined {
  const port = portOf(ctx)
  if (!port) return undefined
  const listeners = new Set<(notice: WriteNotice) => void>()
  // One notice per task, after the writes of that task: posting is off the write's own path, and a burst posts once.
  let pending: WriteNotice | undefined
  let closed = false
  const post = (add: (notice: WriteNotice) => void) => {
    if (!pending) {
      const notice: WriteNotice = { projects: {} }
      pending = notice
      setTimeout(() => {
        pending = undefined
        // Closed meanwhile: the close posted it.
        if (!closed) port.postMessage(notice)
      }, 0)
    }
    add(pending)
  }
  const stopFeed = ctx.feed.subscribe({}, (batch) => {
    if (!batch.some((c) => NOTICED.has(c.kind))) return
    post(({ projects }) => {
      for (const c of batch) {
        if (!NOTICED.has(c.kind)) continue
        const kinds = (projects[c.projectId] ??= [])
        if (!kinds.includes(c.kind)) kinds.push(c.kind)
      }
    })
  })
  if (engine) engine.onMerged = () => post((notice) => void (notice.merged = true))
  port.onmessage = ({ data }) => {
    if (engine) {
      engine.state.clear()
      engine.vectors.clear()
    }
    for (const listener of [...listeners]) listener(data)
    onNotice?.(data)
  }
  const foreign: ForeignWrites = {
    subscribe(listener) {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
  }
  started.set(ctx, foreign)
  ctx.onClose.push(() => {
    stopFeed()
    listeners.clear()
    // A write just before the close is still told (a closed channel refuses to post).
    if (pending) port.postMessage(pending)
    closed = true
    port.close()
  })
  return foreign
}

/** Stores opened on one factory object passed to `openMemory`, by database name. */
const local = new WeakMap<object, Map<string, Set<Port>>>()

function portOf(ctx: StoreContext): Port | undefined {
  const name = `engram-writes:${ctx.db.name}`
  const factory = ctx.dbDeps?.indexedDB
  if (factory === undefined || factory === (globalThis as { indexedDB?: IDBFactory }).indexedDB) {
    return typeof BroadcastChannel === 'undefined' ? undefined : (new BroadcastChannel(name) as unknown as Port)
  }
  let byName = local.get(factory)
  if (!byName) local.set(factory, (byName = new Map()))
  const peers = byName.get(name) ?? new Set<Port>()
  byName.set(name, peers)
  const port: Port = {
    onmessage: null,
    // As a channel delivers: to the others only, each in a task of its own, a copy.
    postMessage(notice) {
      for (const peer of peers) if (peer !== port) setTimeout(() => peer.onmessage?.({ data: structuredClone(notice) }), 0)
    },
    close() {
      peers.delete(port)
      port.onmessage = null
    },
  }
  peers.add(port)
  return port
}
