import { engramMiddleware } from '@engram/ai-sdk'
import type { Context } from '@engram/core'
import { generateText, wrapLanguageModel } from 'ai'
import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../test/support/memory.js'
import { extractMemory } from './extractor.js'
import { scriptedModel } from './scripted-model.js'

describe('the scripted agent through engramMiddleware', () => {
  it('answers from memory with generateText, and the turn records the exchange and runs the extractor', async () => {
    const memory = await openTestMemory({ extractor: extractMemory })
    const project = await memory.projects.create({ name: 'demo' })
    const session = await memory.sessions.create(project.id)
    const say = async (prompt: string) => {
      const turn: { context?: Context; written?: number } = {}
      const model = wrapLanguageModel({
        model: scriptedModel({ context: () => turn.context, facts: async () => (await memory.facts.list(project.id)).items }),
        middleware: engramMiddleware(memory, {
          projectId: project.id,
          sessionId: session.id,
          budget: 400,
          onBegin: ({ context }) => {
            turn.context = context
          },
          onEnd: ({ result }) => {
            turn.written = result.written
          },
        }),
      })
      const { text } = await generateText({ model, prompt })
      return { text, ...turn }
    }
    const first = await say('Remember that my favourite colour is teal.')
    expect(first).toMatchObject({ text: 'Noted: your favourite colour is teal.', written: 1 })
    const second = await say('What is my favourite colour?')
    expect(second.text).toContain('teal')
    expect(second.context?.text).toContain('favourite_colour')
    expect((await memory.messages.tail(session.id, 4)).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
  })
})
