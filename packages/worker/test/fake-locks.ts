import type { LockManagerLike } from '@engram/worker'

/** An in-memory exclusive lock manager with the Web Locks queueing rules (one per simulated origin). */
export function fakeLocks(): LockManagerLike {
  const queues = new Map<string, Array<{ run: () => Promise<void>; signal?: AbortSignal; reject: (e: unknown) => void }>>()
  const held = new Set<string>()
  const pump = (name: string): void => {
    if (held.has(name)) return
    const queue = queues.get(name) ?? []
    const next = queue.shift()
    if (!next) return
    held.add(name)
    void next.run().finally(() => {
      held.delete(name)
      pump(name)
    })
  }
  return {
    request(name, options, callback) {
      return new Promise((resolve, reject) => {
        const entry = { run: () => callback().then(resolve, reject), signal: options.signal, reject }
        options.signal?.addEventListener('abort', () => {
          const queue = queues.get(name) ?? []
          const i = queue.indexOf(entry)
          if (i >= 0) {
            queue.splice(i, 1)
            reject(new DOMException('aborted', 'AbortError'))
          }
        })
        queues.set(name, [...(queues.get(name) ?? []), entry])
        pump(name)
      })
    },
  }
}
