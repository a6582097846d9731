import { connectMemory, type RemoteMemory, type SyncStatus } from '@engram/worker'
import type { SyncHarness } from './sync-harness.js'

let memory: RemoteMemory | undefined

const harness: SyncHarness = {
  async open(userId, relayUrl, options) {
    const worker = options?.skewMs
      ? new Worker(new URL('./skewed-host.worker.ts', import.meta.url), { type: 'module', name: `skew:${Math.round(options.skewMs)}` })
      : new Worker(new URL('./host.worker.ts', import.meta.url), { type: 'module' })
    memory = await connectMemory(worker, { appId: 'e2e-sync', userId, sync: { url: relayUrl, token: () => window.relayToken() } })
    await memory.sync.onStatus((projectId, status) => {
      if (projectId === 'user') harness.statuses.push(status)
    })
    const now = await memory.sync.status('user')
    if (now !== 'off') harness.statuses.push(now)
    const project = await memory.projects.get('user')
    if (!project?.sync.enabled) await memory.projects.update('user', { sync: { enabled: true } })
    return { deviceId: memory.deviceId }
  },
  memory() {
    if (!memory) throw new Error('call syncHarness.open() first')
    return memory
  },
  statuses: [],
  current: () => (harness.statuses.at(-1) ?? 'off') as SyncStatus,
}

window.syncHarness = harness
document.title = 'ready'
