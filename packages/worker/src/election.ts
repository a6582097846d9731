import { reportError } from '@engram/core'
import { defaultLocks, type LockManagerLike } from './web-locks.js'

/** A leadership claim on a named Web Lock. */
export interface Election {
  /** True while this context holds the lock. */
  readonly isLeader: boolean
  /** Calls `listener` on every change of leadership. @returns the unsubscribe function. */
  onChange(listener: (leader: boolean) => void): () => void
  /** Gives up leadership (or the queued claim). The next waiting context takes over. Idempotent. */
  resign(): void
}

/** Options of {@link electLeader}. */
export interface ElectOptions {
  /** Runs when this context becomes leader; the function it returns runs when leadership ends. */
  onLead: () => () => void
  /** Default: `navigator.locks`. Without Web Locks (Node) this context leads at once. */
  locks?: LockManagerLike
}

/**
 * Elects exactly one leader among every context of an origin (tabs, workers)
 * that claims `name`: the holder of the exclusive Web Lock. When the leader's
 * context closes, the browser releases the lock and the next claimant in line
 * becomes leader right away (well within a second).
 *
 * @example
 * const election = electLeader('engram-sync:app:u1', { onLead: () => { const s = startSync(); return () => s.close() } })
 */
export function electLeader(name: string, options: ElectOptions): Election {
  const locks = options.locks ?? defaultLocks()
  const listeners = new Set<(leader: boolean) => void>()
  let leader = false
  let resigned = false
  let release: (() => void) | undefined
  const abort = new AbortController()

  const setLeader = (value: boolean): void => {
    if (leader === value) return
    leader = value
    for (const listener of [...listeners]) listener(value)
  }

  const lead = (): Promise<void> => {
    if (resigned) return Promise.resolve()
    let stop: () => void = () => {}
    try {
      stop = options.onLead()
    } catch (error) {
      reportError(error)
    }
    setLeader(true)
    return new Promise<void>((resolve) => {
      release = () => {
        release = undefined
        try {
          stop()
        } finally {
          setLeader(false)
          resolve()
        }
      }
    })
  }

  if (locks) {
    locks.request(name, { signal: abort.signal, mode: 'exclusive' }, lead).catch(() => {
      // AbortError after resign() while still queued: nothing to release.
    })
  } else {
    void lead()
  }

  return {
    get isLeader() {
      return leader
    },
    onChange(listener) {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    resign() {
      if (resigned) return
      resigned = true
      if (release) release()
      else abort.abort()
    },
  }
}
