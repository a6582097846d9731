import type { Memory } from '@engram/core'

/** Wraps `changes.subscribe` to count live subscriptions; resolves `whenLive(n)` when exactly n are live. */
export function trackSubscriptions(memory: Memory): { readonly opened: number; readonly closed: number; whenLive(n: number): Promise<void> } {
  let opened = 0
  let closed = 0
  const waits: { n: number; resolve: () => void }[] = []
  const check = () => {
    for (const w of [...waits])
      if (opened - closed === w.n) {
        waits.splice(waits.indexOf(w), 1)
        w.resolve()
      }
  }
  const subscribe = memory.changes.subscribe.bind(memory.changes)
  memory.changes.subscribe = async (filter, listener) => {
    const off = await subscribe(filter, listener)
    opened++
    check()
    let done = false
    return async () => {
      await off()
      if (!done) {
        done = true
        closed++
        check()
      }
    }
  }
  return {
    get opened() {
      return opened
    },
    get closed() {
      return closed
    },
    whenLive(n) {
      return new Promise((resolve) => {
        waits.push({ n, resolve })
        check()
      })
    },
  }
}
