import { CONVERSATION_KINDS, DEFAULT_MAX_CLOCK_LEAD_MS, MemoryError, type SyncableMemory } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { noPersistence } from './idb-persistence.js'
import { MIRRORED_KINDS } from './mirror-doc.js'
import { startProjectMirror, type ProjectMirror } from './project-mirror.js'
import { createProjectStatus, type DocState, type ProjectStatus } from './project-status.js'
import { createSessionMirrors } from './session-mirrors.js'
import { createStatusRegistry } from './status-registry.js'
import { createStoredDocs } from './stored-docs.js'
import type { Connector, Sync, SyncErrorReason, SyncOptions, SyncProblem, SyncStatus } from './sync-types.js'
import { checkEncryptionOption, createValueCipher } from './value-cipher.js'
import { muxConnector, type MuxConnector } from './mux-connector.js'
import { websocketConnector } from './websocket-connector.js'

/** Every option `startSync` knows. */
const SYNC_OPTIONS = [
  'url',
  'token',
  'WebSocket',
  'backoff',
  'network',
  'heartbeatMs',
  'connect',
  'transport',
  'persistence',
  'docName',
  'batchSize',
  'maxClockLeadMs',
  'maxFrameBytes',
  'encryption',
  'sessions',
  'onError',
]

/** What `details()` says of a project whose token may not write. */
const READ_ONLY_MESSAGE = "The relay takes no writes from this device's token (read-only scope): this device's changes stay on it and reach no other device"

/** Sessions whose documents load with their project, by default. */
const DEFAULT_EAGER_SESSIONS = 5
/** How long a session document opened on use stays open without use, by default. */
const DEFAULT_SESSION_IDLE_MS = 300_000

/**
 * Starts syncing every project of `memory` whose `sync.enabled` is true: one
 * Y.Doc per project (room `<userId>/<projectId>`), kept offline with
 * y-indexeddb and shared through the relay: by default every document of the
 * device over one multiplexed socket (`transport: 'mux'`), or one y-websocket
 * socket per document (`transport: 'room'`). Turning a
 * project's sync on later starts mirroring it; turning it off (or archiving
 * the project) stops mirroring and deletes nothing.
 *
 * @example
 * const sync = startSync(memory, { url: 'wss://relay.example.com', token: () => fetchToken(), WebSocket: ws })
 * sync.onStatus((projectId, status) => console.log(projectId, status))
 * With `encryption`, values are end-to-end encrypted; a device with another
 * key (or none) reports `crypto` errors and status 'error' and writes nothing.
 * @throws MemoryError `invalid_input` when `url` or `token` is missing (and no `connect` is given) or `encryption` is malformed, `closed` when memory is closed.
 */
export function startSync(memory: SyncableMemory, options: SyncOptions): Sync {
  if (memory.closed) throw new MemoryError('closed', 'This memory store is closed; open it again before startSync()')
  if (typeof options === 'object' && options !== null) {
    // A misspelt option must fail loudly, not be ignored.
    const unknown = Object.keys(options).find((k) => !SYNC_OPTIONS.includes(k) && (options as Record<string, unknown>)[k] !== undefined)
    if (unknown !== undefined)
      throw new MemoryError('invalid_input', `startSync options has an unknown option ${JSON.stringify(unknown)}; known: ${SYNC_OPTIONS.join(', ')}`)
  }
  const onError =
    options?.onError ?? ((error: unknown, projectId: string | undefined) => console.warn(`[engram-sync]${projectId ? ` ${projectId}:` : ''}`, error))
  // The socket reads the relay's time before any frame (learnClock is defined below, with the store's clock).
  const connect = connectorOf(options, onError, (relayTime) => learnClock(relayTime))
  const batchSize = options.batchSize ?? 500
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new MemoryError('invalid_input', 'batchSize must be a positive integer')
  const maxClockLeadMs = options.maxClockLeadMs ?? DEFAULT_MAX_CLOCK_LEAD_MS
  if (!Number.isFinite(maxClockLeadMs) || maxClockLeadMs < 0)
    throw new MemoryError('invalid_input', 'maxClockLeadMs must be a non-negative number of milliseconds')
  const docName = options.docName ?? ((projectId: string) => `engram-sync:${memory.appId}:${memory.userId}:${memory.deviceId}:${projectId}`)
  // Without IndexedDB (plain Node) the document lives in memory only; the Dexie outbox still guards every write.
  const persist = options.persistence ?? typeof indexedDB !== 'undefined'
  checkEncryptionOption(options.encryption)
  // One cipher for every project: a passphrase is derived once per startSync.
  const cipher = options.encryption ? createValueCipher(options.encryption, memory.userId) : undefined

  const eager = options.sessions?.eager ?? DEFAULT_EAGER_SESSIONS
  if (!Number.isInteger(eager) || eager < 0 || eager > 1000) throw new MemoryError('invalid_input', 'sessions.eager must be an integer from 0 to 1000')
  const idleMs = options.sessions?.idleMs ?? DEFAULT_SESSION_IDLE_MS
  if (!Number.isFinite(idleMs) || idleMs < 0) throw new MemoryError('invalid_input', 'sessions.idleMs must be a non-negative number of milliseconds')
  const replication = replicationOf(memory)
  // Every stored document (project and session ones alike) is sealed when the store is encrypted at rest.
  const docs = persist ? createStoredDocs({ memory, docName, onError: (error) => onError(error, undefined) }) : undefined
  const learnClock = async (relayTime: number): Promise<void> => {
    await replication.learnClock(relayTime, { maxLeadMs: maxClockLeadMs })
  }

  const mirrors = new Map<string, ProjectMirror>()
  /** Each mirrored project's documents (the project's, '', and its open sessions'): the project shows what they add up to. */
  const projects = new Map<string, ProjectStatus>()
  /** Whether each running project mirror was started with its conversations syncing (a change restarts it). */
  const conversationsOn = new Map<string, boolean>()
  const sessions = createSessionMirrors({
    memory,
    eager,
    idleMs,
    onError,
    start: (projectId, sessionId) =>
      startProjectMirror({
        memory,
        projectId,
        session: sessionId,
        connect,
        batchSize,
        cipher,
        maxClockLeadMs,
        learnClock,
        persistence: (doc) => (docs ? docs.open(`${docName(projectId)}:${sessionId}`, doc) : noPersistence),
        // The project is 'synced' only once the relay holds this document too; its failures and problems show on the project.
        setStatus: (status, error, reason) => setStatus(projectId, status, error, reason, sessionId),
        setProblems: (problems) => setProblems(projectId, sessionId, problems),
        onError: (error) => onError(error, projectId),
      }),
    stopped: (projectId, sessionId) => {
      const project = projects.get(projectId)
      if (!project || !mirrors.has(projectId)) return
      const state = project.drop(sessionId)
      statuses.setProblems(projectId, project.setProblems(sessionId, []))
      if (state) publishState(projectId, state)
    },
  })
  const statuses = createStatusRegistry()
  const stopping = new Set<Promise<void>>()
  let closed = false
  let closing: Promise<void> | undefined

  /** One document of a project (doc '' the project's, else a session id) changed state: the project shows what they add up to. */
  function setStatus(projectId: string, status: SyncStatus, error?: unknown, reason?: SyncErrorReason, doc = ''): void {
    if (status === 'off') {
      projects.delete(projectId)
      statuses.set(projectId, 'off')
      return
    }
    if (!mirrors.has(projectId)) return
    let project = projects.get(projectId)
    if (!project) projects.set(projectId, (project = createProjectStatus()))
    const message = error === undefined ? undefined : error instanceof Error ? error.message : String(error)
    const state = project.set(doc, {
      status,
      ...(status === 'error' ? { reason: reason ?? 'internal', message } : {}),
      ...(status === 'read_only' ? { reason: 'read_only' as const, message: message ?? READ_ONLY_MESSAGE } : {}),
    })
    if (state) publishState(projectId, state)
  }

  function publishState(projectId: string, state: DocState): void {
    statuses.set(projectId, state.status, { reason: state.reason, message: state.message })
  }

  function setProblems(projectId: string, doc: string, problems: readonly SyncProblem[]): void {
    const project = projects.get(projectId)
    if (!project || !mirrors.has(projectId)) return
    statuses.setProblems(projectId, project.setProblems(doc, problems))
  }

  function startMirror(projectId: string): void {
    if (closed || mirrors.has(projectId)) return
    const mirror = startProjectMirror({
      memory,
      projectId,
      connect,
      batchSize,
      cipher,
      maxClockLeadMs,
      learnClock,
      persistence: (doc) => (docs ? docs.open(docName(projectId), doc) : noPersistence),
      setStatus: (status, error, reason) => setStatus(projectId, status, error, reason),
      setProblems: (problems) => setProblems(projectId, '', problems),
      onError: (error) => onError(error, projectId),
    })
    mirrors.set(projectId, mirror)
    const conversations = replication.syncsConversations(projectId)
    conversationsOn.set(projectId, conversations)
    setStatus(projectId, 'connecting')
    if (conversations)
      void mirror.ready
        .then(() => (mirrors.get(projectId) === mirror ? sessions.refresh(projectId) : undefined))
        .catch((error: unknown) => onError(error, projectId))
  }

  function stopMirror(projectId: string): void {
    const mirror = mirrors.get(projectId)
    if (!mirror) return
    mirrors.delete(projectId)
    conversationsOn.delete(projectId)
    setStatus(projectId, 'off')
    const done = Promise.all([mirror.stop(), sessions.stopProject(projectId)])
      .then(() => undefined)
      .finally(() => stopping.delete(done))
    stopping.add(done)
  }

  async function refresh(projectIds?: readonly string[]): Promise<void> {
    if (closed || memory.closed) return
    const projects = await memory.projects.list({ includeArchived: true })
    for (const project of projects) {
      if (projectIds && !projectIds.includes(project.id)) continue
      const on = project.sync.enabled && project.archivedAt === undefined
      // Turning conversations on or off changes what the project document holds: mirror it afresh.
      if (on && mirrors.has(project.id) && conversationsOn.get(project.id) !== replication.syncsConversations(project.id)) {
        stopMirror(project.id)
        await Promise.all([...stopping])
      }
      if (on) startMirror(project.id)
      else stopMirror(project.id)
    }
  }

  const report = (error: unknown): void => {
    if (!(error instanceof MemoryError && error.code === 'closed')) onError(error, undefined)
  }
  // Attached first: a second startSync on the same store is refused (`conflict`) before it subscribes or mirrors anything.
  const sync: Sync = {
    status: (projectId) => statuses.get(projectId),
    details: (projectId) => statuses.details(projectId),
    onStatus: (listener) => statuses.onStatus(listener),
    async flush() {
      await initial
      await Promise.all([...mirrors.values()].map((m) => m.drain()))
      await Promise.all([...mirrors.keys()].map((projectId) => sessions.drain(projectId)))
      await sessions.drainAll()
    },
    async openSession(projectId, sessionId) {
      await initial
      if (!mirrors.has(projectId)) throw new MemoryError('invalid_input', `Project ${JSON.stringify(projectId)} does not sync on this device`)
      await sessions.open(projectId, sessionId)
    },
    whenSynced: (projectId) => statuses.whenSynced(projectId),
    close() {
      // Every caller waits for the same shutdown, however many times close() is called.
      closing ??= (async () => {
        closed = true // from here on no mirror starts, also not from a refresh in flight
        for (const unsubscribe of await subscriptions.catch(() => [])) await unsubscribe().catch(() => undefined)
        await initial
        for (const projectId of [...mirrors.keys()]) stopMirror(projectId)
        await sessions.stopAll()
        statuses.close('sync closed')
        detach()
        await Promise.all([...stopping])
        ;(connect as Partial<MuxConnector>).destroy?.()
        await docs?.close()
      })()
      return closing
    },
  }
  const detach = replicationOf(memory).attachSync(sync)
  const subscriptions = Promise.all([
    memory.changes.subscribe({ kinds: ['projects'] }, (batch) => {
      void refresh(batch.map((c) => c.id)).catch(report)
    }),
    memory.changes.subscribe({ kinds: [...MIRRORED_KINDS, ...CONVERSATION_KINDS] }, (batch) => {
      // Session writes reach the project document only where conversations sync, and not the
      // activity time of an append (a session write with messages): the messages carry it.
      const appended = new Set(batch.filter((c) => c.kind === 'messages').map((c) => c.projectId))
      const local = batch.filter(
        (c) =>
          c.origin === 'local' &&
          c.kind !== 'messages' &&
          (c.kind !== 'sessions' || (replication.syncsConversations(c.projectId) && !(c.op === 'put' && appended.has(c.projectId)))),
      )
      for (const projectId of new Set(local.map((c) => c.projectId))) {
        void mirrors.get(projectId)?.drain().catch(report)
      }
    }),
    memory.changes.subscribe({ kinds: ['messages', 'sessions'] }, (batch) => {
      if (closed) return
      // A purge (from any device) empties the session's document too.
      for (const c of batch) if (c.kind === 'sessions' && c.op === 'delete' && mirrors.has(c.projectId)) void sessions.purge(c.projectId, c.id).catch(report)
      const written = new Set(batch.filter((c) => c.kind === 'messages' && c.origin === 'local' && c.op === 'put').map((c) => c.projectId))
      for (const projectId of written) if (mirrors.has(projectId)) void sessions.drain(projectId).catch(report)
      // New sessions (made here or arriving from other devices): the most recent load eagerly.
      // A session write that comes with messages is an append's activity time: the drain above covers it.
      const changed = new Set(batch.filter((c) => c.kind === 'sessions' && c.op === 'put' && !written.has(c.projectId)).map((c) => c.projectId))
      for (const projectId of changed) if (mirrors.has(projectId)) void sessions.refresh(projectId).catch(report)
    }),
  ])
  // Subscribed before the first refresh, so no project change between the two is missed.
  const initial = subscriptions.then(() => refresh()).catch(report)
  return sync
}

function connectorOf(options: SyncOptions, onError: (error: unknown, projectId: string) => void, clock: (relayTime: number) => Promise<void>): Connector {
  if (typeof options !== 'object' || options === null) throw new MemoryError('invalid_input', 'startSync needs options { url, token }')
  if (options.connect !== undefined) {
    if (typeof options.connect !== 'function') throw new MemoryError('invalid_input', 'connect must be a function')
    return options.connect
  }
  if (typeof options.url !== 'string' || !/^(wss?|https?):\/\//.test(options.url))
    throw new MemoryError('invalid_input', 'url must be the relay address, e.g. wss://relay.example.com')
  if (typeof options.token !== 'function') throw new MemoryError('invalid_input', 'token must be a function returning a promise of a signed token')
  if (options.transport !== undefined && options.transport !== 'mux' && options.transport !== 'room')
    throw new MemoryError('invalid_input', `transport must be 'mux' or 'room', got ${JSON.stringify(options.transport)}`)
  if (options.transport !== 'room')
    return muxConnector({
      url: options.url,
      token: options.token,
      WebSocket: options.WebSocket,
      onError,
      clock,
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.network !== undefined ? { network: options.network } : {}),
      ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
      ...(options.maxFrameBytes !== undefined ? { maxFrameBytes: options.maxFrameBytes } : {}),
    })
  return websocketConnector({
    url: options.url,
    token: options.token,
    WebSocket: options.WebSocket,
    onError,
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.network !== undefined ? { network: options.network } : {}),
    ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
    ...(options.maxFrameBytes !== undefined ? { maxFrameBytes: options.maxFrameBytes } : {}),
  })
}
