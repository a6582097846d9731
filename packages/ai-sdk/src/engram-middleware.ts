import type { LanguageModelMiddleware } from 'ai'
import { checkMiddlewareOptions, type EngramMiddlewareOptions, type TurnsMemory } from './middleware-options.js'
import { type CallParams, lastUserMessage, withContext } from './prompt-context.js'
import { createTurnTracker, type OpenTurn } from './turn-tracker.js'

/**
 * AI SDK middleware (`wrapLanguageModel`) that runs each user turn as an
 * Engram turn. Before a model call it runs `turns.begin` and puts the built
 * context in front of the user's message; when the model finishes the turn
 * (any finish but `tool-calls`, so a tool loop is one turn) it runs
 * `turns.end` with the reply, so the journal, the conversation and the
 * extractor work as without the SDK. A stream that is cancelled, aborted or
 * fails is ended as an interrupted turn with the text streamed so far.
 *
 * @throws MemoryError `invalid_input` for a memory without turns or bad options.
 * @example
 * const model = wrapLanguageModel({
 *   model: openai('gpt-4.1'),
 *   middleware: engramMiddleware(memory, { projectId, sessionId, budget: 2000 }),
 * })
 * const { text } = await generateText({ model, prompt: 'What is my favourite colour?' })
 */
export function engramMiddleware(memory: TurnsMemory, options: EngramMiddlewareOptions): LanguageModelMiddleware {
  const { projectId, sessionId, budget, onError, onBegin, onEnd } = checkMiddlewareOptions(memory, options)
  const tracker = createTurnTracker(memory, sessionId, onError, onEnd)
  const byParams = new WeakMap<CallParams, OpenTurn>()

  return {
    specificationVersion: 'v3',

    async transformParams({ params }) {
      const user = lastUserMessage(params.prompt)
      if (user === undefined) return params
      // The loop's later steps end with tool results after the user's message: same turn.
      const turn = tracker.turnFor(user, user.index < params.prompt.length - 1)
      const { context } = await memory.turns.begin(projectId, { sessionId, turnId: turn.turnId, prompt: user.text || '(no text)', budget })
      try {
        onBegin?.({ turnId: turn.turnId, context })
      } catch (error) {
        onError(error)
      }
      const next = { ...params, prompt: withContext(params.prompt, user.index, context.text) }
      byParams.set(next, turn)
      return next
    },

    async wrapGenerate({ doGenerate, params }) {
      const turn = byParams.get(params)
      if (turn === undefined) return doGenerate()
      let result: Awaited<ReturnType<typeof doGenerate>>
      try {
        result = await doGenerate()
      } catch (error) {
        await tracker.end(turn, { interrupted: true })
        throw error
      }
      turn.texts.push(result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(''))
      if (result.finishReason.unified !== 'tool-calls') await tracker.end(turn, { interrupted: false })
      return result
    },

    async wrapStream({ doStream, params }) {
      const turn = byParams.get(params)
      if (turn === undefined) return doStream()
      let result: Awaited<ReturnType<typeof doStream>>
      try {
        result = await doStream()
      } catch (error) {
        await tracker.end(turn, { interrupted: true })
        throw error
      }
      return { ...result, stream: tracker.observe(turn, result.stream, params.abortSignal) }
    },
  }
}

export type { EngramMiddlewareOptions, TurnsMemory }
