import { checkHlc } from '../store/hlc.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import type { ReplicationApi } from './replication.js'
import { loadSyncedKinds } from './synced-kinds.js'
import type { StoreContext } from '../store/store-context.js'

/**
 * The replication seam of a store, its outbox and remote-apply code (every
 * synced kind's descriptor) loaded in the background as sync attaches (or on
 * its first use): a store that never syncs never loads it. The clock methods
 * answer at once.
 */
export function replicationOnUse(ctx: StoreContext): ReplicationApi {
  const load = loadOnUse('replication', async () => {
    const [code, descriptors] = await Promise.all([import('./replication.js'), loadSyncedKinds()])
    return code.createReplication(ctx, descriptors)
  })
  return {
    deviceId: ctx.clock.deviceId,
    ...methodsOnUse(load, ['pending', 'ack', 'applyRemote', 'snapshot', 'pendingSessions', 'recentSessions', 'learnClock', 'restamp']),
    syncsConversations: (projectId) => ctx.conversationProjects.has(projectId),
    receiveClock: (hlc, maxClockLeadMs) => ctx.clock.receive(hlc, maxClockLeadMs),
    checkStamp: (hlc, maxClockLeadMs) => checkHlc(hlc, ctx.clock.now(), maxClockLeadMs),
    clockOffset: () => (ctx.clockOffset.learnedAt === undefined ? undefined : ctx.clockOffset.ms),
    attachSync: (engine) => {
      const detach = ctx.sync.attach(engine)
      // From now on sync reads the outbox and applies remote changes in the background: their code
      // loads now, not when the network or a page unloading may keep it from arriving (the call that
      // needs it tries again and fails visibly).
      load().catch(() => {})
      return detach
    },
  }
}
