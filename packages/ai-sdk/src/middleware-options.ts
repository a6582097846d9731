import { type Context, type Memory, MemoryError, reportError, type TurnEndResult } from '@engram/core'

/** What {@link engramMiddleware} needs of a memory: the turn lifecycle. */
export type TurnsMemory = Pick<Memory, 'turns'>

/** Options of {@link engramMiddleware}. */
export interface EngramMiddlewareOptions {
  /** The project whose memory the context is built from. */
  projectId: string
  /** The session turns are recorded in: a conversation session (messages are appended) or any journal session id. */
  sessionId: string
  /** Token budget of the context put into each prompt (1–10,000,000). */
  budget: number
  /** Where a failure to record a turn's end goes (the model's answer is still returned). Default: `reportError`. */
  onError?: (error: unknown) => void
  /** Called before each model call with its turn's id and context (the same for every step of a tool loop), to show what the model sees. */
  onBegin?: (turn: { turnId: string; context: Context }) => void
  /** Called when a turn has been ended, with what `turns.end` reported (memory writes of the extractor). */
  onEnd?: (turn: { turnId: string; reply: string; interrupted: boolean; result: TurnEndResult }) => void
}

const KEYS = new Set(['projectId', 'sessionId', 'budget', 'onError', 'onBegin', 'onEnd'])

/** Checks the middleware's memory and options. @throws MemoryError `invalid_input`. */
export function checkMiddlewareOptions(memory: TurnsMemory, options: EngramMiddlewareOptions): EngramMiddlewareOptions & { onError: (error: unknown) => void } {
  if (typeof memory !== 'object' || memory === null || typeof memory.turns !== 'object' || memory.turns === null) {
    throw new MemoryError('invalid_input', 'engramMiddleware needs a memory with turns (openMemory, or createMemory with runtimeModule)')
  }
  if (typeof options !== 'object' || options === null) throw new MemoryError('invalid_input', 'engramMiddleware options must be an object')
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && !KEYS.has(key)) throw new MemoryError('invalid_input', `engramMiddleware does not know the option "${key}"`)
  }
  for (const key of ['projectId', 'sessionId'] as const) {
    const value = options[key]
    if (typeof value !== 'string' || value === '' || value.trim() !== value)
      throw new MemoryError('invalid_input', `engramMiddleware ${key} must be a non-empty string without surrounding whitespace`)
  }
  const { budget } = options
  if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1 || budget > 10_000_000) {
    throw new MemoryError('invalid_input', 'engramMiddleware budget must be an integer token count in 1–10,000,000')
  }
  if (options.onError !== undefined && typeof options.onError !== 'function')
    throw new MemoryError('invalid_input', 'engramMiddleware onError must be a function')
  return { ...options, onError: options.onError ?? reportError }
}
