import type { LanguageModelMiddleware } from 'ai'
import type { EngramMiddlewareOptions, TurnsMemory } from './middleware-options.js'
import type { UserTurn } from './prompt-context.js'

type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>
/** A part of a model's stream (text deltas, tool calls, finish, …). */
export type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never

/** A turn the middleware has begun: the text of its steps so far, and whether it was ended. */
export interface OpenTurn {
  readonly turnId: string
  readonly key: string
  texts: string[]
  ended: boolean
}

/** Streamed text is saved with `turns.partial` each time it grows by this many characters. */
const PARTIAL_EVERY = 256

/** Which turn a call belongs to, and ending turns (once). */
export interface TurnTracker {
  /** The open turn when `continuing` a loop on the same user message, else a new one. */
  turnFor(user: UserTurn, continuing: boolean): OpenTurn
  /** Ends a turn once with the text of all its steps; failures go to `onError`. */
  end(turn: OpenTurn, how: { interrupted: boolean }): Promise<void>
  /** Passes a model stream through, recording its text, and ends the turn when the stream does. */
  observe(turn: OpenTurn, stream: ReadableStream<StreamPart>, signal: AbortSignal | undefined): ReadableStream<StreamPart>
}

/** Creates the tracker of one middleware (one Engram session). */
export function createTurnTracker(
  memory: TurnsMemory,
  sessionId: string,
  onError: (error: unknown) => void,
  onEnd?: EngramMiddlewareOptions['onEnd'],
): TurnTracker {
  let current: OpenTurn | undefined
  const replyOf = (turn: OpenTurn) => turn.texts.filter((t) => t !== '').join('\n\n')

  const tracker: TurnTracker = {
    turnFor(user, continuing) {
      const key = `${user.index}\u0000${user.text}`
      if (!(continuing && current?.key === key && !current.ended)) current = { turnId: crypto.randomUUID(), key, texts: [], ended: false }
      return current
    },

    async end(turn, { interrupted }) {
      if (turn.ended) return
      turn.ended = true
      const reply = replyOf(turn)
      try {
        const result = await memory.turns.end({ sessionId, turnId: turn.turnId, reply, interrupted })
        onEnd?.({ turnId: turn.turnId, reply, interrupted, result })
      } catch (error) {
        onError(error)
      }
    },

    observe(turn, stream, signal) {
      const reader = stream.getReader()
      let text = ''
      let saved = 0
      let finish: string | undefined
      let failed = false
      let saving: Promise<void> = Promise.resolve()
      const settle = async (interrupted: boolean) => {
        signal?.removeEventListener('abort', onAbort)
        await saving
        if (turn.ended) return
        turn.texts.push(text)
        if (interrupted || finish !== 'tool-calls') await tracker.end(turn, { interrupted })
      }
      const onAbort = () => void settle(true)
      signal?.addEventListener('abort', onAbort, { once: true })
      const savePartial = () => {
        const steps = [...turn.texts, text].filter((t) => t !== '').join('\n\n')
        saved = text.length
        saving = saving.then(() => memory.turns.partial({ sessionId, turnId: turn.turnId, text: steps })).catch(onError)
      }
      return new ReadableStream<StreamPart>({
        async pull(controller) {
          let next: ReadableStreamReadResult<StreamPart>
          try {
            next = await reader.read()
          } catch (error) {
            await settle(true)
            controller.error(error)
            return
          }
          if (next.done) {
            await settle(failed || finish === undefined || finish === 'error' || finish === 'interrupted')
            controller.close()
            return
          }
          const part = next.value
          if (part.type === 'text-delta') {
            text += part.delta
            if (text.length - saved >= PARTIAL_EVERY) savePartial()
          } else if (part.type === 'finish') finish = part.finishReason.unified
          else if (part.type === 'error') failed = true
          controller.enqueue(part)
        },
        async cancel(reason) {
          await settle(true)
          await reader.cancel(reason)
        },
      })
    },
  }
  return tracker
}
