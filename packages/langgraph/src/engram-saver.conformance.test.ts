import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../test/support/memory.js'
import { EngramSaver } from './engram-saver.js'

// The suite is written against Jest-style globals; hand it Vitest's.
Object.assign(globalThis, { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach })
const { validate } = await import('@langchain/langgraph-checkpoint-validation')

const memories = new Map<EngramSaver, Awaited<ReturnType<typeof openTestMemory>>>()

// LangGraph's own conformance suite: every checkpointer must pass it.
validate({
  checkpointerName: '@engram/langgraph EngramSaver',
  async createCheckpointer() {
    const memory = await openTestMemory()
    const saver = new EngramSaver(memory)
    memories.set(saver, memory)
    return saver
  },
  async destroyCheckpointer(saver) {
    await memories.get(saver)?.close()
    memories.delete(saver)
  },
})
