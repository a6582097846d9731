import type { Change } from '@engram/core'
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai'
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { openTestMemory } from '../../../test/support/memory.js'
import { textResult, textStreamParts, toolCallResult, usage } from '../../../test/support/model-results.js'
import { engramMiddleware } from './engram-middleware.js'

async function setup() {
  const memory = await openTestMemory()
  const project = await memory.projects.create({ name: 'chat' })
  await memory.facts.set(project.id, 'favourite_colour', 'teal')
  const session = await memory.sessions.create(project.id)
  const kinds = async () => (await memory.journal.load(session.id)).records.map((r) => r.kind)
  const firstUserText = (prompt: unknown) =>
    JSON.stringify((prompt as { role: string; content: { text?: string }[] }[]).find((m) => m.role === 'user')?.content[0])
  return { memory, projectId: project.id, sessionId: session.id, kinds, firstUserText }
}

/** Resolves with the first change batch `predicate` accepts. */
function nextChange(memory: Awaited<ReturnType<typeof openTestMemory>>, predicate: (c: Change) => boolean): Promise<void> {
  return new Promise((resolve) => {
    void memory.changes.subscribe({}, (batch) => {
      if (batch.some(predicate)) resolve()
    })
  })
}

describe('engramMiddleware', () => {
  it('runs a generateText tool loop as one turn with the same context in every step', async () => {
    const { memory, projectId, sessionId, kinds, firstUserText } = await setup()
    const model = new MockLanguageModelV3({ doGenerate: [toolCallResult('lookup', { q: 'weather' }), textResult('It is sunny, and you like teal.')] })
    const lookup = tool({ inputSchema: z.object({ q: z.string() }), execute: async () => 'sunny' })
    const begun: { turnId: string; tokens: number }[] = []
    const onBegin = ({ turnId, context }: { turnId: string; context: { tokens: number } }) => void begun.push({ turnId, tokens: context.tokens })
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { projectId, sessionId, budget: 500, onBegin }) })
    const result = await generateText({
      model: wrapped,
      system: 'You are helpful.',
      tools: { lookup },
      stopWhen: stepCountIs(5),
      prompt: 'What is my favourite colour?',
    })

    expect(result.text).toBe('It is sunny, and you like teal.')
    const [first, second] = model.doGenerateCalls
    expect(firstUserText(first?.prompt)).toContain('favourite_colour: teal')
    expect(firstUserText(second?.prompt)).toBe(firstUserText(first?.prompt))
    expect(first?.prompt[0]).toEqual({ role: 'system', content: 'You are helpful.' })
    expect(await kinds()).toEqual(['turn.begin', 'turn.end'])
    expect(begun).toHaveLength(2)
    expect(begun[1]).toEqual(begun[0])
    expect((await memory.messages.tail(sessionId, 5)).map((m) => [m.role, m.content])).toEqual([
      ['user', 'What is my favourite colour?'],
      ['assistant', 'It is sunny, and you like teal.'],
    ])
  })

  it('records a streamed reply with streamText once the stream finishes', async () => {
    const { memory, projectId, sessionId, kinds, firstUserText } = await setup()
    const model = new MockLanguageModelV3({
      doStream: {
        stream: convertArrayToReadableStream(
          textStreamParts(['You like ', 'teal.']).map((p) =>
            p.type === 'finish' ? { ...p, usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens } } : p,
          ),
        ),
      },
    })
    const ended: unknown[] = []
    const onEnd = (turn: { reply: string; interrupted: boolean; result: unknown }) => void ended.push(turn)
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { projectId, sessionId, budget: 500, onEnd }) })
    const result = streamText({ model: wrapped, prompt: 'What colour do I like?' })
    expect(await result.text).toBe('You like teal.')
    await result.consumeStream()
    expect(firstUserText(model.doStreamCalls[0]?.prompt)).toContain('teal')
    expect(await kinds()).toEqual(['turn.begin', 'turn.end'])
    expect((await memory.messages.tail(sessionId, 1))[0]?.content).toBe('You like teal.')
    expect(ended).toEqual([{ turnId: expect.any(String), reply: 'You like teal.', interrupted: false, result: { written: 0 } }])
  })

  it('ends an aborted stream as an interrupted turn with the text streamed so far', async () => {
    const { memory, projectId, sessionId, kinds } = await setup()
    let push!: ReadableStreamDefaultController<unknown>
    const stream = new ReadableStream({
      start: (c) => {
        push = c
      },
    })
    const model = new MockLanguageModelV3({ doStream: { stream: stream as never } })
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { projectId, sessionId, budget: 500 }) })
    const abort = new AbortController()
    const recorded = nextChange(memory, (c) => c.kind === 'messages' && c.op === 'put' && c.id !== undefined)
    const result = streamText({ model: wrapped, prompt: 'Tell me a long story.', abortSignal: abort.signal, onError: () => {} })
    const reader = result.textStream.getReader()
    for (const part of textStreamParts(['Once upon ', 'a time'], false)) push.enqueue(part)
    let seen = ''
    while (seen !== 'Once upon a time') seen += (await reader.read()).value ?? ''
    await recorded // the user message
    const interrupted = nextChange(memory, (c) => c.kind === 'messages')
    abort.abort()
    await interrupted
    expect(await kinds()).toEqual(['turn.begin', 'turn.interrupted'])
    const last = (await memory.messages.tail(sessionId, 1))[0]
    expect(last).toMatchObject({ role: 'assistant', content: 'Once upon a time', meta: { interrupted: true } })
  })

  it('ends a stream that fails midway as interrupted, and the next turn begins normally', async () => {
    const { memory, projectId, sessionId, kinds } = await setup()
    const parts = textStreamParts(['Half an '], false)
    const broken = new ReadableStream({
      pull(c) {
        const part = parts.shift()
        if (part) c.enqueue(part)
        else c.error(new Error('connection reset'))
      },
    })
    const model = new MockLanguageModelV3({
      doStream: [{ stream: broken as never }, { stream: convertArrayToReadableStream(textStreamParts(['Fine now.'])) as never }],
    })
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { projectId, sessionId, budget: 500 }) })
    const first = streamText({ model: wrapped, prompt: 'First question', onError: () => {} })
    await first.consumeStream()
    await expect(first.text).rejects.toThrow('connection reset')
    expect(await streamText({ model: wrapped, prompt: 'Second question' }).text).toBe('Fine now.')
    expect(await kinds()).toEqual(['turn.begin', 'turn.interrupted', 'turn.begin', 'turn.end'])
    expect((await memory.messages.tail(sessionId, 4)).map((m) => m.content)).toEqual(['First question', 'Half an ', 'Second question', 'Fine now.'])
  })

  it('refuses bad options with invalid_input', async () => {
    const { memory, projectId, sessionId } = await setup()
    expect(() => engramMiddleware(memory, { projectId, sessionId, budget: 0 })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(() => engramMiddleware(memory, { projectId, sessionId: ' s', budget: 10 })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(() => engramMiddleware(memory, { projectId, sessionId, budget: 10, extra: true } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    )
    expect(() => engramMiddleware({} as never, { projectId, sessionId, budget: 10 })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
  })
})

describe('engramMiddleware and a stream left open', () => {
  it('saves the streamed text, and the next turn reconciles the open one as interrupted with it', async () => {
    const { memory, projectId, sessionId } = await setup()
    const long = 'word '.repeat(60) // over the 256 characters after which the partial reply is saved
    const hanging = new ReadableStream({
      start(c) {
        for (const part of textStreamParts([long], false)) c.enqueue(part)
      },
    })
    const model = new MockLanguageModelV3({
      doStream: [{ stream: hanging as never }, { stream: convertArrayToReadableStream(textStreamParts(['Back again.'])) as never }],
    })
    let saved!: () => void
    const partialSaved = new Promise<void>((resolve) => {
      saved = resolve
    })
    const partial = memory.turns.partial
    Object.assign(memory.turns, { partial: (turn: Parameters<typeof partial>[0]) => partial(turn).then(saved) })
    const wrapped = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { projectId, sessionId, budget: 500 }) })
    const first = streamText({ model: wrapped, prompt: 'Start a story' }).textStream.getReader()
    let seen = ''
    while (seen !== long) seen += (await first.read()).value ?? ''
    await partialSaved // the app goes away here: the stream is never finished nor cancelled
    expect(await streamText({ model: wrapped, prompt: 'Are you there?' }).text).toBe('Back again.')
    const records = (await memory.journal.load(sessionId)).records
    expect(records.map((r) => r.kind)).toEqual(['turn.begin', 'turn.interrupted', 'turn.begin', 'turn.end'])
    expect(records[1]?.payload).toMatchObject({ partialReply: long, reason: 'next turn began' })
  })
})
