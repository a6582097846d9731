import { MemoryError } from '@engram/core'
import { connectMemory, sendPort, type RemoteMemory } from '@engram/worker'
import type { Harness, HostKind } from './harness.js'

let memory: RemoteMemory | undefined
let unwatch: (() => Promise<void>) | undefined

function target(kind: HostKind): Worker | SharedWorker | MessagePort {
  switch (kind) {
    case 'dedicated':
      return new Worker(new URL('./host.worker.ts', import.meta.url), { type: 'module' })
    case 'shared':
      return new SharedWorker(new URL('./host.worker.ts', import.meta.url), { type: 'module', name: 'engram-e2e' })
    case 'port': {
      const worker = new Worker(new URL('./host.worker.ts', import.meta.url), { type: 'module' })
      const channel = new MessageChannel()
      sendPort(worker, channel.port2)
      return channel.port1
    }
    case 'fake-sync':
      return new Worker(new URL('./fake-sync.worker.ts', import.meta.url), { type: 'module' })
  }
}

const harness: Harness = {
  async open(kind, userId, options = {}) {
    const fakeSync = kind === 'fake-sync' ? { sync: { url: 'ws://127.0.0.1:9/none', token: () => 'test-token' } } : {}
    memory = await connectMemory(target(kind), { appId: 'e2e', userId, ...fakeSync, ...options })
    return { mode: memory.mode, deviceId: memory.deviceId }
  },
  memory() {
    if (!memory) throw new Error('call harness.open() first')
    return memory
  },
  MemoryError,
  seen: [],
  async watch() {
    unwatch = await harness.memory().changes.subscribe({}, (batch) => {
      for (const c of batch) harness.seen.push({ kind: c.kind, op: c.op, id: c.id, projectId: c.projectId })
    })
  },
  async unwatch() {
    await unwatch?.()
  },
}

window.harness = harness
document.title = 'ready'
