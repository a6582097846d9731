import type { IDBFactory } from 'fake-indexeddb'
import type { Memory } from '@engram/core'
import type { WriteNotice } from '../../packages/core/src/search/cache/foreign-writes.js'
import { openTestMemory } from './memory.js'

/** A store on `indexedDB` whose notices received can be awaited: the next one naming a project and kind (merges and others skipped). */
export async function connectWithNotices(
  indexedDB: IDBFactory,
  userId: string,
): Promise<{ memory: Memory & { indexedDB: IDBFactory }; notice: (projectId: string, kind: string) => Promise<WriteNotice>; received: WriteNotice[] }> {
  const queue: WriteNotice[] = []
  const received: WriteNotice[] = []
  let wake: (() => void) | undefined
  const memory = await openTestMemory({
    indexedDB,
    userId,
    onForeignWrite: (n: WriteNotice) => {
      queue.push(n)
      received.push(n)
      wake?.()
    },
  } as Record<string, unknown>)
  return {
    memory,
    received,
    async notice(projectId, kind) {
      for (;;) {
        while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve))
        const next = queue.shift()!
        if (next.projects[projectId]?.includes(kind as never)) return next
      }
    },
  }
}
