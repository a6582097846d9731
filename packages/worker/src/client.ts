import * as Comlink from 'comlink'
import { MemoryError, type Change, type ChangeFilter, type Memory, type MemoryView } from '@engram/core'
import type {
  ClientPlugins, ConnectOptions, OpenRequest, RemoteChanges, RemoteMemory, RemoteSync, SyncStatus, WorkerContract,
} from './api.js'
import { installTransferHandlers } from './transfer-handlers.js'
import { CONNECT_MESSAGE, holdLock } from './web-locks.js'

/** What `connectMemory` can talk to. */
export type MemoryTarget = Worker | SharedWorker | MessagePort | Comlink.Endpoint

/** The namespaces of `Memory` that are objects of methods. */
const NAMESPACES = [
  'projects', 'facts', 'blocks', 'sessions', 'messages', 'summaries', 'archive', 'context',
  'journal', 'runs', 'tasks', 'usage', 'lessons', 'turns', 'replication',
] as const satisfies readonly (keyof Memory)[]
/** The top-level functions of `Memory` (besides close). */
const FUNCTIONS = ['search', 'stats', 'export', 'import', 'persist'] as const satisfies readonly (keyof Memory)[]

// Compile-time check: a namespace added to Memory must be added above, or this line fails.
type Covered = (typeof NAMESPACES)[number] | (typeof FUNCTIONS)[number] | 'changes' | 'close' | 'closed' | 'appId' | 'userId' | 'deviceId'
const everyMemberCovered: Exclude<keyof Memory, Covered> extends never ? true : never = true
void everyMemberCovered

/**
 * Connects the UI thread to an Engram host in a worker (`@engram/worker/host`
 * or `exposeMemory()`), a SharedWorker, or a `MessagePort` (Electron). Returns
 * the `Memory` shape with every call a Promise.
 *
 * @example
 * const worker = new Worker(new URL('@engram/worker/host', import.meta.url), { type: 'module' })
 * const memory = await connectMemory(worker, { appId: 'my-agent', userId: 'u_123' })
 * await memory.facts.set('user', 'name', 'Ada')
 * @throws MemoryError `invalid_input` on bad options, `conflict` / `quota_exceeded` as `openMemory`.
 */
export async function connectMemory(target: MemoryTarget, options: ConnectOptions): Promise<RemoteMemory> {
  installTransferHandlers()
  checkConnectOptions(options)
  const { endpoint, end } = endpointOf(target)
  const clientId = randomId()
  const clientLock = `engram-client:${clientId}`
  const releaseLock = await holdLock(clientLock)
  const remote = Comlink.wrap<WorkerContract>(endpoint)
  const request: OpenRequest = {
    appId: options.appId,
    userId: options.userId,
    clientId,
    clientLock,
    ...(options.sync ? { sync: { url: options.sync.url, ...(options.sync.encryption ? { encryption: options.sync.encryption } : {}) } } : {}),
    ...(options.embedder ? { embedderDimensions: options.embedder.dimensions } : {}),
    ...(options.summarizer ? { summarizer: true } : {}),
    ...(options.extractor ? { extractor: true } : {}),
  }
  let info
  try {
    info = await remote.open(request, makePlugins(options))
  } catch (error) {
    releaseLock()
    remote[Comlink.releaseProxy]()
    throw error
  }

  let closed = false
  let closing: Promise<void> | undefined
  const closedError = (): MemoryError => new MemoryError('closed', 'This memory connection is closed; connect again with connectMemory()')
  const guard = <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => (closed ? Promise.reject(closedError()) : call(...args))

  const memory: Record<string, unknown> = {
    appId: info.appId,
    userId: info.userId,
    deviceId: info.deviceId,
    mode: info.mode,
    get closed() {
      return closed
    },
    changes: remoteChanges(remote, guard, () => closed),
    sync: remoteSync(remote, guard, () => closed),
    close(): Promise<void> {
      closing ??= (async () => {
        closed = true
        await Promise.race([remote.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000))])
        releaseLock()
        remote[Comlink.releaseProxy]()
        end()
      })()
      return closing
    },
  }
  for (const name of NAMESPACES) memory[name] = remoteNamespace(remote[name] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>, guard)
  for (const name of FUNCTIONS) memory[name] = guard(remote[name] as unknown as (...a: unknown[]) => Promise<unknown>)
  return memory as unknown as RemoteMemory
}

/**
 * Hands `port` to a host running in `target` (a worker started from
 * `@engram/worker/host`), which then serves it like a tab of its own.
 * Pass the other end of the channel to `connectMemory`.
 */
export function sendPort(target: { postMessage(message: unknown, transfer: Transferable[]): void }, port: MessagePort): void {
  target.postMessage(CONNECT_MESSAGE, [port])
}

type Guard = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => (...args: A) => Promise<R>

/** One object per namespace, one cached Comlink call proxy per method: a call costs one message. */
function remoteNamespace(ns: Record<string, (...a: unknown[]) => Promise<unknown>>, guard: Guard): object {
  const methods = new Map<string, (...a: unknown[]) => Promise<unknown>>()
  return new Proxy({}, {
    get(_target, prop) {
      if (typeof prop !== 'string' || prop === 'then') return undefined
      let method = methods.get(prop)
      if (!method) {
        method = guard(ns[prop]!)
        methods.set(prop, method)
      }
      return method
    },
  })
}

type Unsubscribe = (() => void) & { [Comlink.releaseProxy](): void }

/** Wraps a remote unsubscribe so calling it releases the proxies of both sides, once. */
function unsubscribeOnce(off: Comlink.Remote<() => void>, isClosed: () => boolean): () => Promise<void> {
  let done: Promise<void> | undefined
  return () => {
    done ??= (async () => {
      try {
        if (!isClosed()) await off()
      } finally {
        (off as unknown as Unsubscribe)[Comlink.releaseProxy]()
      }
    })()
    return done
  }
}

function remoteChanges(remote: Comlink.Remote<WorkerContract>, guard: Guard, isClosed: () => boolean): RemoteChanges {
  const subscribe = (remote.changes as unknown as Comlink.Remote<WorkerContract['changes'] & Comlink.ProxyMarked>).subscribe
  return {
    subscribe: guard(async (filter: ChangeFilter, listener: (batch: Change[]) => void) => {
      if (typeof listener !== 'function') throw new MemoryError('invalid_input', 'changes.subscribe needs a listener function')
      const off = await subscribe(filter, Comlink.proxy((batch: Change[]) => listener(batch)))
      return unsubscribeOnce(off as unknown as Comlink.Remote<() => void>, isClosed)
    }),
  }
}

function remoteSync(remote: Comlink.Remote<WorkerContract>, guard: Guard, isClosed: () => boolean): RemoteSync {
  const sync = remote.sync as unknown as Comlink.Remote<WorkerContract['sync'] & Comlink.ProxyMarked>
  return {
    status: guard((projectId: string) => sync.status(projectId) as Promise<SyncStatus>),
    flush: guard(() => sync.flush() as Promise<void>),
    whenSynced: guard((projectId: string) => sync.whenSynced(projectId) as Promise<void>),
    isLeader: guard(() => sync.isLeader() as Promise<boolean>),
    onStatus: guard(async (listener: (projectId: string, status: SyncStatus) => void) => {
      const off = await sync.onStatus(Comlink.proxy((projectId: string, status: SyncStatus) => listener(projectId, status)))
      return unsubscribeOnce(off as unknown as Comlink.Remote<() => void>, isClosed)
    }),
    onLeaderChange: guard(async (listener: (leader: boolean) => void) => {
      const off = await sync.onLeaderChange(Comlink.proxy((leader: boolean) => listener(leader)))
      return unsubscribeOnce(off as unknown as Comlink.Remote<() => void>, isClosed)
    }),
  }
}

function makePlugins(options: ConnectOptions): (ClientPlugins & Comlink.ProxyMarked) | undefined {
  const { embedder, summarizer, extractor, sync } = options
  if (!embedder && !summarizer && !extractor && !sync) return undefined
  const missing = (name: string) => () => Promise.reject(new MemoryError('internal', `This tab supplied no ${name}`))
  return Comlink.proxy<ClientPlugins>({
    embed: embedder
      ? async (texts) => {
        const vectors = await embedder.embed(texts)
        // Hand the vectors over instead of copying them (once per buffer; shared memory cannot move).
        const buffers = [...new Set(vectors.map((v) => v.buffer))].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer)
        return Comlink.transfer(vectors, buffers)
      }
      : missing('embedder'),
    summarize: summarizer ? (texts, maxTokens) => summarizer.summarize(texts, maxTokens) : missing('summarizer'),
    extract: extractor
      ? async (exchange, view) => {
        try {
          return await extractor(exchange, view as MemoryView)
        } finally {
          (view as unknown as Unsubscribe)[Comlink.releaseProxy]?.()
        }
      }
      : missing('extractor'),
    token: sync ? async () => sync.token() : missing('sync token'),
  })
}

function endpointOf(target: MemoryTarget): { endpoint: Comlink.Endpoint; end: () => void } {
  if (typeof Worker !== 'undefined' && target instanceof Worker) return { endpoint: target, end: () => target.terminate() }
  if (typeof SharedWorker !== 'undefined' && target instanceof SharedWorker) {
    target.port.start()
    return { endpoint: target.port, end: () => target.port.close() }
  }
  const port = target as Comlink.Endpoint & { start?: () => void; close?: () => void }
  port.start?.()
  return { endpoint: port, end: () => port.close?.() }
}

function checkConnectOptions(options: ConnectOptions): void {
  if (typeof options !== 'object' || options === null) throw new MemoryError('invalid_input', 'connectMemory needs options { appId, userId }')
  if (typeof options.appId !== 'string' || typeof options.userId !== 'string') throw new MemoryError('invalid_input', 'connectMemory needs string appId and userId')
  const e = options.embedder
  if (e !== undefined && (typeof e.embed !== 'function' || !Number.isInteger(e.dimensions) || e.dimensions < 1)) {
    throw new MemoryError('invalid_input', 'embedder must be { dimensions: positive integer, embed(texts) }')
  }
  if (options.summarizer !== undefined && typeof options.summarizer.summarize !== 'function') throw new MemoryError('invalid_input', 'summarizer must have summarize(texts, maxTokens)')
  if (options.extractor !== undefined && typeof options.extractor !== 'function') throw new MemoryError('invalid_input', 'extractor must be a function')
  if (options.sync !== undefined && (typeof options.sync.url !== 'string' || typeof options.sync.token !== 'function')) {
    throw new MemoryError('invalid_input', 'sync must be { url: string, token: () => Promise<string> }')
  }
}

function randomId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto
  return c?.randomUUID ? c.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`
}
