import * as Comlink from 'comlink'
import { MemoryError, type Memory, type MemoryView } from '@engram/core'
import type { ClientPlugins, ConnectOptions, OpenedInfo, OpenRequest, RemoteMemory, WorkerContract } from './api.js'
import { withCloneCheck } from './clone-check.js'
import { installTransferHandlers, reviveError, summarizeError } from './transfer-handlers.js'
import { CONNECT_MESSAGE, defaultLocks, holdLock } from './web-locks.js'

/** What `connectMemory` can talk to. */
export type MemoryTarget = Worker | SharedWorker | MessagePort | Comlink.Endpoint

/** The namespaces of `Memory` that are objects of methods. */
const NAMESPACES = [
  'changes',
  'status',
  'sync',
  'encryption',
  'projects',
  'facts',
  'blocks',
  'sessions',
  'messages',
  'summaries',
  'archive',
  'context',
  'journal',
  'runs',
  'tasks',
  'usage',
  'lessons',
  'turns',
  'limitations',
  'patterns',
  'spaces',
  'artifacts',
  'people',
  'extraction',
  'observations',
  'entities',
  'relations',
] as const satisfies readonly (keyof Memory)[]
/** The top-level functions of `Memory` (besides close). */
const FUNCTIONS = ['search', 'stats', 'export', 'import', 'persist', 'adopt'] as const satisfies readonly (keyof Memory)[]

// Compile-time check: a namespace added to Memory must be added above, or this line fails.
type Covered = (typeof NAMESPACES)[number] | (typeof FUNCTIONS)[number] | 'close' | 'closed' | 'appId' | 'userId' | 'deviceId' | 'mode'
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
  const hostLock = `engram-host:${clientId}`
  const releaseLock = await holdLock(clientLock)
  const remote = Comlink.wrap<WorkerContract>(endpoint)
  const request: OpenRequest = {
    appId: options.appId,
    userId: options.userId,
    clientId,
    clientLock,
    hostLock,
    ...(options.sync ? { sync: { url: options.sync.url, ...(options.sync.encryption ? { encryption: options.sync.encryption } : {}) } } : {}),
    ...(options.encryption !== undefined ? { encryption: options.encryption } : {}),
    ...(options.embedder ? { embedderDimensions: options.embedder.dimensions } : {}),
    ...(typeof options.embedder?.model === 'string' ? { embedderModel: options.embedder.model } : {}),
    ...(options.summarizer ? { summarizer: true } : {}),
    ...(options.extractor ? { extractor: true } : {}),
    ...(typeof options.extractor === 'object'
      ? {
          backgroundExtractor: {
            ...(options.extractor.settings ? { settings: { ...options.extractor.settings } } : {}),
            observe: typeof options.extractor.observe === 'function',
            reflect: typeof options.extractor.reflect === 'function',
          },
        }
      : {}),
  }
  let info: OpenedInfo
  try {
    info = await remote.open(request, makePlugins(options))
  } catch (error) {
    releaseLock()
    remote[Comlink.releaseProxy]()
    throw error
  }

  let closed = false
  let closing: Promise<void> | undefined
  const closedError = (): MemoryError => new MemoryError('closed', 'This connection is closed; connect again with connectMemory()')
  // Calls in flight, so that a worker that dies fails them at once instead of leaving them pending forever.
  const inFlight = new Set<(error: MemoryError) => void>()
  // Every failure reaches the app as a MemoryError (Comlink rebuilds other thrown values as plain Errors).
  const guard =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      if (closed) return Promise.reject(closedError())
      return new Promise<R>((resolve, reject) => {
        inFlight.add(reject)
        call(...args)
          .then(resolve, (error: unknown) => reject(asMemoryError(error)))
          .finally(() => inFlight.delete(reject))
      })
    }
  const hostEnded = (): void => {
    if (closed) return
    closed = true
    const error = new MemoryError('closed', 'The worker serving this memory ended; connect again with connectMemory()')
    for (const reject of [...inFlight]) reject(error)
    inFlight.clear()
    releaseLock()
    remote[Comlink.releaseProxy]()
    end()
  }
  // The host holds `hostLock` while it serves us: getting it means the host is gone (closed by us, or dead).
  defaultLocks()
    ?.request(hostLock, { mode: 'exclusive' }, async () => hostEnded())
    .catch(() => {})

  const memory: Record<string, unknown> = {
    appId: info.appId,
    userId: info.userId,
    deviceId: info.deviceId,
    mode: info.mode,
    get closed() {
      return closed
    },
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
  for (const name of NAMESPACES)
    memory[name] = remoteNamespace(remote[name] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>, guard, () => closed, name)
  for (const name of FUNCTIONS) memory[name] = guard(withCloneCheck(name, remote[name] as unknown as (...a: unknown[]) => Promise<unknown>))
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

/** Methods whose last argument is a listener: it is proxied into the worker, and they return its unsubscribe. */
const SUBSCRIBERS = new Set(['subscribe', 'onStatus', 'onLeaderChange'])

/**
 * One object per namespace, one cached Comlink call proxy per method: a call costs one message.
 * A subscriber's listener goes over as a callback proxy; the unsubscribe it returns releases both sides' proxies.
 */
function remoteNamespace(ns: Record<string, (...a: unknown[]) => Promise<unknown>>, guard: Guard, isClosed: () => boolean, name: string): object {
  const methods = new Map<string, (...a: unknown[]) => Promise<unknown>>()
  const subscriber =
    (call: (...a: unknown[]) => Promise<unknown>) =>
    async (...args: unknown[]) => {
      const listener = args.pop()
      if (typeof listener !== 'function') throw new MemoryError('invalid_input', 'a listener function is required')
      const off = await call(
        ...args,
        Comlink.proxy((...a: unknown[]) => listener(...a)),
      )
      return unsubscribeOnce(off as Comlink.Remote<() => void>, isClosed)
    }
  return new Proxy(
    {},
    {
      get(target, prop) {
        // A property set on the namespace (an app wrapping a method) wins over the remote one.
        if (Reflect.has(target, prop)) return Reflect.get(target, prop)
        if (typeof prop !== 'string' || prop === 'then') return undefined
        let method = methods.get(prop)
        if (!method) {
          // Arguments postMessage cannot send are refused here, naming the field (the listener goes as a proxy).
          const call = withCloneCheck(`${name}.${prop}`, ns[prop]!)
          method = guard(SUBSCRIBERS.has(prop) ? subscriber(call) : call)
          methods.set(prop, method)
        }
        return method
      },
    },
  )
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
        ;(off as unknown as Unsubscribe)[Comlink.releaseProxy]()
      }
    })()
    return done
  }
}

function asMemoryError(error: unknown): MemoryError {
  return error instanceof MemoryError ? error : reviveError(summarizeError(error))
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
            return await (typeof extractor === 'function' ? extractor(exchange, view as MemoryView) : extractor.extract(exchange, view as MemoryView))
          } finally {
            ;(view as unknown as Unsubscribe)[Comlink.releaseProxy]?.()
          }
        }
      : missing('extractor'),
    observe:
      typeof extractor === 'object' && extractor.observe
        ? async (input, view) => {
            try {
              return await extractor.observe!(input, view as MemoryView)
            } finally {
              ;(view as unknown as Unsubscribe)[Comlink.releaseProxy]?.()
            }
          }
        : missing('observer'),
    reflect:
      typeof extractor === 'object' && extractor.reflect
        ? async (input, view) => {
            try {
              return await extractor.reflect!(input, view as MemoryView)
            } finally {
              ;(view as unknown as Unsubscribe)[Comlink.releaseProxy]?.()
            }
          }
        : missing('reflector'),
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

const CONNECT_OPTIONS = ['appId', 'userId', 'sync', 'encryption', 'embedder', 'summarizer', 'extractor']
const SYNC_OPTIONS = ['url', 'token', 'encryption']

/** Refuses fields outside `allowed`, naming the first one (a misspelt option must not be ignored). */
function refuseUnknown(name: string, value: object, allowed: readonly string[]): void {
  const unknown = Object.keys(value).find((k) => !allowed.includes(k) && (value as Record<string, unknown>)[k] !== undefined)
  if (unknown !== undefined) throw new MemoryError('invalid_input', `${name} has an unknown option ${JSON.stringify(unknown)}; known: ${allowed.join(', ')}`)
}

function checkConnectOptions(options: ConnectOptions): void {
  if (typeof options !== 'object' || options === null) throw new MemoryError('invalid_input', 'connectMemory needs options { appId, userId }')
  refuseUnknown('connectMemory options', options, CONNECT_OPTIONS)
  if (typeof options.sync === 'object' && options.sync !== null) refuseUnknown('connectMemory options.sync', options.sync, SYNC_OPTIONS)
  if (typeof options.appId !== 'string' || typeof options.userId !== 'string') throw new MemoryError('invalid_input', 'appId and userId must be strings')
  const e = options.embedder
  if (e !== undefined && (typeof e.embed !== 'function' || !Number.isInteger(e.dimensions) || e.dimensions < 1)) {
    throw new MemoryError('invalid_input', 'embedder must be { dimensions: integer > 0, embed() }')
  }
  if (options.summarizer !== undefined && typeof options.summarizer.summarize !== 'function')
    throw new MemoryError('invalid_input', 'summarizer must have summarize()')
  const x = options.extractor
  if (x !== undefined && typeof x !== 'function' && (typeof x !== 'object' || x === null || typeof x.extract !== 'function'))
    throw new MemoryError('invalid_input', 'extractor must be a function or { extract(), observe?(), reflect?(), settings? }')
  // encryption is checked in the worker, as openMemory checks it.
  if (options.sync !== undefined && (typeof options.sync.url !== 'string' || typeof options.sync.token !== 'function')) {
    throw new MemoryError('invalid_input', 'sync must be { url: string, token() }')
  }
}

/** Names this connection's locks: unique among the tabs of one origin (no secure context needed). */
function randomId(): string {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`
}
