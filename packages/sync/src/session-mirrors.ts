import { MemoryError, type SyncableMemory } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import type { ProjectMirror } from './project-mirror.js'

/** What the session mirrors need from the sync engine. */
export interface SessionMirrorsDeps {
  readonly memory: SyncableMemory
  /** How many of a project's most recently active sessions load at start (and as sessions arrive). */
  readonly eager: number
  /** A session document opened on use closes after this many ms without use (0: never). */
  readonly idleMs?: number
  /** Starts the mirror of one session document. */
  start(projectId: string, sessionId: string): ProjectMirror
  /** A session document's mirror stopped (purged, or its project stopped): its state and problems go. */
  stopped?(projectId: string, sessionId: string): void
  onError(error: unknown, projectId: string): void
}

/**
 * The session documents of projects whose conversations sync: one Y.Doc per
 * session (room `<userId>/<projectId>/<sessionId>`), so a project document
 * stays small and a device loads only the conversations it uses. The most
 * recent `eager` sessions load with the project; any other loads on
 * {@link SessionMirrors.open} or when this device writes to it, and closes
 * again after `idleMs` without use (its messages stay on the device; its
 * document opens again on the next use), so a device keeps open only what it
 * uses and the relay unloads the rest.
 */
export interface SessionMirrors {
  /** Starts the mirrors of the project's `eager` most recent sessions and of those with local writes waiting. */
  refresh(projectId: string): Promise<void>
  /** Starts (if needed) one session's mirror; resolves once it is loaded and reconciled. */
  open(projectId: string, sessionId: string): Promise<void>
  /** Starts and drains the mirrors of every session of the project with local writes waiting. */
  drain(projectId: string): Promise<void>
  /** Waits for refreshes in flight, then drains every running session mirror. */
  drainAll(): Promise<void>
  /** Empties a purged session's document (relay and stored copy), drops its room on the relay and stops its mirror. */
  purge(projectId: string, sessionId: string): Promise<void>
  /** Stops the session mirrors of a project. */
  stopProject(projectId: string): Promise<void>
  /** Stops every session mirror. */
  stopAll(): Promise<void>
  /** The running mirror of a session (tests, benchmarks). */
  get(projectId: string, sessionId: string): ProjectMirror | undefined
  /** How many session mirrors run (tests, benchmarks). */
  readonly size: number
  /** Closes the session documents idle for `idleMs` now (the sweep runs by itself too). */
  closeIdle(): Promise<void>
}

/** A running session mirror and what decides when it closes. */
type RunningSession = ProjectMirror & { sessionId: string; eager: boolean; usedAt: number }

/** Creates the session mirrors of one sync engine. */
export function createSessionMirrors(deps: SessionMirrorsDeps): SessionMirrors {
  const running = new Map<string, RunningSession>()
  const idleMs = deps.idleMs ?? 0
  const replication = replicationOf(deps.memory)
  const keyOf = (projectId: string, sessionId: string): string => `${projectId}\u0000${sessionId}`
  let stopped = false
  /** Refreshes in flight: a flush waits for the mirrors they start. */
  const busy = new Set<Promise<void>>()
  /** Work that finds the store closed after the mirrors stopped (sync closed, then the store) failed at nothing. */
  const unlessStopped = (error: unknown): void => {
    if (!(stopped && error instanceof MemoryError && error.code === 'closed')) throw error
  }
  function track(work: Promise<void>): Promise<void> {
    const tracked = work.catch(unlessStopped).finally(() => busy.delete(tracked))
    busy.add(tracked)
    return tracked
  }

  /** The session's running mirror, started if needed; `eager` marks one of the project's recent sessions. */
  function ensure(projectId: string, sessionId: string, eager = false): ProjectMirror | undefined {
    if (stopped || !replication.syncsConversations(projectId)) return undefined
    const key = keyOf(projectId, sessionId)
    let mirror = running.get(key)
    if (!mirror) {
      mirror = Object.assign(deps.start(projectId, sessionId), { sessionId, eager, usedAt: Date.now() })
      running.set(key, mirror)
    }
    mirror.usedAt = Date.now()
    if (eager) mirror.eager = true
    return mirror
  }

  async function closeIdle(): Promise<void> {
    if (stopped || idleMs <= 0) return
    const now = Date.now()
    const idle = [...running.entries()].filter(([, m]) => !m.eager && now - m.usedAt >= idleMs)
    for (const projectId of new Set(idle.map(([, m]) => m.projectId))) {
      // A session with local writes waiting stays open until they are out.
      const waiting = new Set(await replication.pendingSessions(projectId).catch(() => [] as string[]))
      for (const [key, m] of idle) {
        if (m.projectId !== projectId || waiting.has(m.sessionId) || running.get(key) !== m || now - m.usedAt < idleMs) continue
        await stop(key)
      }
    }
  }
  const sweep =
    idleMs > 0 ? setInterval(() => void closeIdle().catch((error: unknown) => deps.onError(error, '')), Math.min(30_000, Math.max(10, idleMs / 2))) : undefined
  ;(sweep as { unref?: () => void } | undefined)?.unref?.()

  async function stop(key: string): Promise<void> {
    const mirror = running.get(key)
    if (!mirror) return
    running.delete(key)
    await mirror.stop()
    deps.stopped?.(mirror.projectId, mirror.sessionId)
  }

  const forProject = (projectId: string): string[] => [...running.entries()].filter(([, m]) => m.projectId === projectId).map(([k]) => k)

  return {
    refresh(projectId) {
      return track(
        (async () => {
          if (stopped || !replication.syncsConversations(projectId)) return
          const recent = deps.eager > 0 ? await replication.recentSessions(projectId, deps.eager) : []
          const waiting = await replication.pendingSessions(projectId)
          // Sessions no longer among the recent ones close once idle.
          const eager = new Set(recent)
          for (const m of running.values()) if (m.projectId === projectId && !eager.has(m.sessionId)) m.eager = false
          for (const sessionId of recent) ensure(projectId, sessionId, true)
          for (const sessionId of waiting) ensure(projectId, sessionId)
          await Promise.all(waiting.map((sessionId) => running.get(keyOf(projectId, sessionId))?.drain()))
        })(),
      )
    },
    async open(projectId, sessionId) {
      const mirror = ensure(projectId, sessionId)
      if (!mirror)
        throw new MemoryError(
          stopped ? 'closed' : 'invalid_input',
          stopped ? 'Sync is closed' : `The conversations of project ${JSON.stringify(projectId)} do not sync; turn them on with memory.projects.setSync()`,
        )
      await mirror.ready
    },
    async drain(projectId) {
      if (stopped || !replication.syncsConversations(projectId)) return
      const waiting = await replication.pendingSessions(projectId).catch((error: unknown): string[] => {
        unlessStopped(error)
        return []
      })
      await Promise.all(waiting.map((sessionId) => ensure(projectId, sessionId)?.drain()))
    },
    async drainAll() {
      while (busy.size > 0) await Promise.all([...busy])
      await Promise.all([...running.values()].map((m) => m.drain()))
    },
    async purge(projectId, sessionId) {
      const mirror = ensure(projectId, sessionId)
      if (!mirror) return
      try {
        await mirror.clear()
        // The relay deletes the room: its storage and the user's quota are freed.
        await mirror.drop()
      } catch (error) {
        deps.onError(error, projectId)
      }
      await stop(keyOf(projectId, sessionId))
    },
    async stopProject(projectId) {
      await Promise.all(forProject(projectId).map(stop))
    },
    async stopAll() {
      stopped = true
      if (sweep !== undefined) clearInterval(sweep)
      await Promise.all([...running.keys()].map(stop))
    },
    get: (projectId, sessionId) => running.get(keyOf(projectId, sessionId)),
    get size() {
      return running.size
    },
    closeIdle,
  }
}
