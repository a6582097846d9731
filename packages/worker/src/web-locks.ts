/** The part of the Web Locks API Engram uses (`navigator.locks`). */
export interface LockManagerLike {
  request(name: string, options: { signal?: AbortSignal; mode?: 'exclusive' }, callback: () => Promise<void>): Promise<unknown>
}

/** The Web Locks of this context (window, worker), or undefined where there are none (Node). */
export function defaultLocks(): LockManagerLike | undefined {
  const nav = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator
  return nav?.locks
}

/**
 * Takes the exclusive lock `name` and holds it until the returned function is
 * called or this context ends. Resolves once the lock is held.
 */
export function holdLock(name: string, locks: LockManagerLike | undefined = defaultLocks()): Promise<() => void> {
  if (!locks) return Promise.resolve(() => {})
  return new Promise((held, failed) => {
    locks.request(name, { mode: 'exclusive' }, () => new Promise<void>((release) => held(release))).catch(failed)
  })
}

/** The message that hands a host a `MessagePort` to serve (see `sendPort`). */
export const CONNECT_MESSAGE = 'engram:connect'
