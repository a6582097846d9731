// A host whose "sync" only records that it runs: the election is what is under test.
import { exposeMemory, type StartSync } from '@engram/worker'

const fakeStartSync: StartSync = () => {
  const state = self as unknown as { syncRunning?: boolean }
  state.syncRunning = true
  return {
    status: () => 'synced',
    onStatus: () => () => {},
    flush: () => {},
    close: () => {
      state.syncRunning = false
    },
  }
}

exposeMemory({ startSync: fakeStartSync })
