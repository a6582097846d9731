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

  it('relates "Dana works at Acme" through the knowledge operations; "Dana now works at Initech" closes it', async () => {
    const memory = await openTestMemory({ extractor: aiExtractor({ model: scriptedMemoryModel() }) })
    await memory.projects.create({ name: 'P', id: 'p' })
    const session = await memory.sessions.create('p')
    const say = async (turnId: string, prompt: string) => {
      await memory.turns.begin('p', { sessionId: session.id, turnId, prompt, budget: 400 })
      await memory.turns.end({ sessionId: session.id, turnId, reply: 'Noted.' })
      await memory.extraction.flush()
    }
    await say('t1', 'Dana works at Acme.')
    const dana = (await memory.entities.resolve('p', 'Dana'))!
    expect(dana.type).toBe('person')
    const acme = (await memory.entities.resolve('p', 'Acme'))!
    expect((await memory.relations.current('p', dana.id)).map((r) => r.object)).toEqual([acme.id])
    await say('t2', 'Dana now works at Initech. I work at home.')
    const initech = (await memory.entities.resolve('p', 'Initech'))!
    expect((await memory.relations.current('p', dana.id, { predicate: 'works_at' })).map((r) => r.object)).toEqual([initech.id])
    expect((await memory.relations.history('p', dana.id, 'works_at')).map((r) => [r.object, r.validTo !== undefined])).toEqual([
      [acme.id, true],
      [initech.id, false],
    ])
    expect((await memory.entities.list('p')).map((e) => e.name)).toEqual(['Acme', 'Dana', 'Initech'])
    await memory.close()
  })
})
