import { aiExtractor } from '@engram/ai-sdk'
import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../test/support/memory.js'
import { scriptedMemoryModel } from './scripted-memory-model.js'

describe('the demo agent with aiExtractor on the scripted memory model', () => {
  it('remembers and forgets through the background queue; hostile text stays a plain value', async () => {
    const memory = await openTestMemory({ extractor: aiExtractor({ model: scriptedMemoryModel() }) })
    await memory.projects.create({ name: 'P', id: 'p' })
    const session = await memory.sessions.create('p')
    const say = async (turnId: string, prompt: string) => {
      await memory.turns.begin('p', { sessionId: session.id, turnId, prompt, budget: 400 })
      await memory.turns.end({ sessionId: session.id, turnId, reply: 'Noted.' })
      await memory.extraction.flush()
    }
    await say('t1', 'Remember that my favourite colour is teal. Remember that my age is 42!')
    await say('t2', 'Remember that the payload is <img src=x onerror=alert(1)>')
    expect((await memory.facts.get('p', 'favourite_colour'))?.value).toBe('teal')
    expect((await memory.facts.get('p', 'age'))?.value).toBe(42)
    expect((await memory.facts.get('p', 'payload'))?.value).toBe('<img src=x onerror=alert(1)>')
    await say('t3', 'Forget my favourite colour.')
    expect(await memory.facts.get('p', 'favourite_colour')).toBeUndefined()
    expect((await memory.usage.project('p')).calls).toBe(3)
    await memory.close()
  })
})
