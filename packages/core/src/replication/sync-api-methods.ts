import { MemoryError } from '../store/errors.js'
import type { SyncApi, SyncSlotState } from './sync-api.js'
import { checkId } from '../store/validate.js'

const NOT_RUNNING = 'Sync is not running: start it with startSync(memory, { url, token }) or connectMemory(worker, { sync })'

/** `memory.sync`'s queries over the slot's state (loaded on the first call; the slot attaches engines and subscribes without them). */
export function createSyncApi(state: SyncSlotState): Omit<SyncApi, 'onStatus' | 'onLeaderChange'> {
  const { assertOpen } = state
  const checkProject = (projectId: unknown) => {
    assertOpen()
    if (typeof projectId !== 'string' || projectId === '') throw new MemoryError('invalid_input', 'projectId must be a non-empty string')
  }
  return {
    async status(projectId) {
      checkProject(projectId)
      return state.engine?.status(projectId) ?? 'off'
    },
    async details(projectId) {
      checkProject(projectId)
      return state.engine?.details(projectId) ?? { status: 'off', problems: [] }
    },
    async flush() {
      assertOpen()
      await state.engine?.flush()
    },
    async whenSynced(projectId) {
      checkProject(projectId)
      const engine = state.engine
      if (!engine) throw new MemoryError('invalid_input', NOT_RUNNING)
      return engine.whenSynced(projectId)
    },
    async openSession(projectId, sessionId) {
      checkProject(projectId)
      checkId('sessionId', sessionId)
      const engine = state.engine
      if (!engine?.openSession) throw new MemoryError('invalid_input', NOT_RUNNING)
      return engine.openSession(projectId, sessionId)
    },
    async isLeader() {
      assertOpen()
      return state.engine !== undefined
    },
  }
}
