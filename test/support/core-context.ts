import { MIRRORED_SETS } from '../../packages/core/src/catalog/lists.js'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { createChangeFeed } from '../../packages/core/src/store/change-feed.js'
import { DEFAULT_MAX_CLOCK_LEAD_MS } from '../../packages/core/src/store/hlc.js'
import { createHybridClock } from '../../packages/core/src/store/hlc.js'
import { prepareProjects } from '../../packages/core/src/projects/projects.js'
import { createStatusHub } from '../../packages/core/src/store/status.js'
import { createSyncSlot } from '../../packages/core/src/replication/sync-api.js'
import { EngramDb } from '../../packages/core/src/catalog/schema.js'
import type { IndexedDoc, StoreContext } from '../../packages/core/src/store/store-context.js'
import { estimateTokenizer } from '../../packages/core/src/store/token-estimate.js'
import { testClock } from './memory.js'

let counter = 0

/**
 * A bare store context, as openMemory builds it, for tests of core's non-public
 * seams (sync hooks, import). Its text index only records what it is told, in `docs`.
 */
export async function openTestContext(options: { deviceId?: string } = {}) {
  const clock = testClock()
  const db = new EngramDb(`context-${++counter}`, { indexedDB: new IDBFactory(), IDBKeyRange })
  await db.open()
  const docs = new Map<string, IndexedDoc>()
  const assertOpen = () => {}
  const status = createStatusHub(clock.now, assertOpen)
  const ctx: StoreContext = {
    db,
    appId: 't',
    userId: 'u',
    now: clock.now,
    tokenizer: estimateTokenizer,
    status,
    sync: createSyncSlot(status, assertOpen),
    clock: createHybridClock(options.deviceId ?? 'devA', clock.now),
    clockOffset: { ms: 0, boundMs: DEFAULT_MAX_CLOCK_LEAD_MS, corrections: [] },
    feed: createChangeFeed(),
    mirrored: MIRRORED_SETS,
    syncedProjects: new Set(),
    conversationProjects: new Set(),
    index: {
      tables: [],
      put: async (_w, doc) => void docs.set(doc.docId, doc),
      remove: async (_w, docId) => void docs.delete(docId),
      clearing: async () => ({
        removeProject: async (_w, projectId) => {
          for (const [id, doc] of docs) if (doc.projectId === projectId) docs.delete(id)
        },
        reset: async () => docs.clear(),
      }),
    },
    assertOpen,
    onClose: [],
  }
  await prepareProjects(ctx)
  return { ctx, clock, docs }
}
