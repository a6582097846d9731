import { MemoryError, openMemory } from '@engram/core'
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
  async openLocal(userId, options = {}) {
    memory = await openMemory({ appId: 'e2e', userId, ...options })
    return { mode: memory.mode, deviceId: memory.deviceId }
  },
  rawDump,
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

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error)
  })
}

const latin1 = new TextDecoder('latin1')

/** Values and keys flattened to text; bytes read as Latin-1 (UTF-8 text inside them shows). */
async function flatten(value: unknown, out: string[]): Promise<void> {
  if (value === null || value === undefined) return
  if (typeof value === 'string') out.push(value)
  else if (typeof value !== 'object') out.push(String(value))
  else if (value instanceof Blob) await flatten(new Uint8Array(await value.arrayBuffer()), out)
  else if (ArrayBuffer.isView(value)) out.push(latin1.decode(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)))
  else if (value instanceof ArrayBuffer) out.push(latin1.decode(new Uint8Array(value)))
  else if (Array.isArray(value)) for (const v of value) await flatten(v, out)
  else
    for (const [k, v] of Object.entries(value)) {
      out.push(k)
      await flatten(v, out)
    }
}

async function rawDump(name: string): Promise<Record<string, string>> {
  const db = await request(indexedDB.open(name))
  const out: Record<string, string> = {}
  for (const storeName of Array.from(db.objectStoreNames)) {
    const store = db.transaction(storeName).objectStore(storeName)
    const parts: string[] = []
    await flatten(await request(store.getAllKeys()), parts)
    for (const v of await request(store.getAll())) await flatten(v, parts)
    out[`store:${storeName}`] = parts.join('\n')
    for (const indexName of Array.from(store.indexNames)) {
      const index = db.transaction(storeName).objectStore(storeName).index(indexName)
      const keys: string[] = []
      await flatten(await request(index.getAllKeys()), keys)
      out[`index:${storeName}.${indexName}`] = keys.join('\n')
    }
  }
  db.close()
  return out
}

window.harness = harness
document.title = 'ready'
