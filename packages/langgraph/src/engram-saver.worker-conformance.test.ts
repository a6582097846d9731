import { MessageChannel } from 'node:worker_threads'
import type { Memory } from '@engram/core'
import { connectMemory, exposeMemory, type MemoryHost } from '@engram/worker'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { EngramSaver } from './engram-saver.js'

// The suite is written against Jest-style globals; hand it Vitest's.
Object.assign(globalThis, { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach })
const { validate } = await import('@langchain/langgraph-checkpoint-validation')

const open = new Map<EngramSaver, { memory: Memory; host: MemoryHost }>()
let users = 0

// The same conformance suite, with the saver on a connectMemory client: every call crosses a MessageChannel to a host.
validate({
  checkpointerName: '@engram/langgraph EngramSaver through a worker client',
  async createCheckpointer() {
    const channel = new MessageChannel()
    const host = exposeMemory({ endpoint: channel.port1 as never, memory: { indexedDB: new IDBFactory(), IDBKeyRange }, locks: null })
    const memory = await connectMemory(channel.port2 as never, { appId: 'saver', userId: `u${++users}` })
    const saver = new EngramSaver(memory)
    open.set(saver, { memory, host })
    return saver
  },
  async destroyCheckpointer(saver) {
    const opened = open.get(saver)
    open.delete(saver)
    await opened?.memory.close()
    await opened?.host.close()
  },
})
