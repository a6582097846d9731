import { generateText, type LanguageModel, Output } from 'ai'
import {
  type BackgroundExtractor,
  type ExtractionAnswer,
  type ExtractionSettings,
  MemoryError,
  type MemoryOperation,
  type ModelUsage,
  type ObservationAnswer,
  type ObservationDraft,
} from '@engram/core'
import { extractionSchema, type ModelObservation, type ModelOperation, observationsSchema } from './extraction-schema.js'
import { toKnowledgeOperation } from './knowledge-operations.js'
import {
  EXTRACTION_SYSTEM,
  extractionPrompt,
  OBSERVER_SYSTEM,
  observerPrompt,
  PROMPT_LIMITS,
  type PromptLimits,
  REFLECTOR_SYSTEM,
  reflectorPrompt,
  relatedMemory,
} from './extraction-prompt.js'

/** Options of {@link aiExtractor}. */
export interface AiExtractorOptions extends ExtractionSettings {
  /** Any AI SDK language model (`openai('gpt-4.1-mini')`, a local OpenAI-compatible server, a gateway id). */
  model: LanguageModel
  /** Observational memory (observer and reflector calls with the same model); default true. */
  observe?: boolean
  /** How much related memory each extraction prompt shows. */
  limits?: Partial<PromptLimits>
  /** Extra instructions appended to the extractor's system prompt (what this app wants remembered). */
  instructions?: string
  /** Retries inside one model call (default 0: the queue retries with backoff). */
  maxRetries?: number
}

const OPTIONS = [
  'model',
  'observe',
  'limits',
  'instructions',
  'maxRetries',
  'dailyTokenBudget',
  'batchTokens',
  'maxAttempts',
  'retryDelayMs',
  'observeTokens',
  'reflectTokens',
  'turnHoldMs',
]
const SETTINGS = ['dailyTokenBudget', 'batchTokens', 'maxAttempts', 'retryDelayMs', 'observeTokens', 'reflectTokens', 'turnHoldMs'] as const

/** A key as compared: case, spaces, underscores and dashes do not make another key. */
const normalKey = (key: string) =>
  key
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ')

const isoTime = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const ms = Date.parse(text)
  return Number.isFinite(ms) ? ms : undefined
}

/** An expiry the model dated (an ISO date it can parse), as the operation's `expiresAt`. */
const expiry = (text: string | undefined) => {
  const ms = isoTime(text)
  return ms === undefined || ms < 0 ? {} : { expiresAt: ms }
}

/** The model's operations as Engram's, keyed onto the existing keys. */
export function toOperations(ops: readonly ModelOperation[], existingKeys: readonly string[]): MemoryOperation[] {
  const known = new Map(existingKeys.map((k) => [normalKey(k), k]))
  // An existing key written another way is that key; a new one is kept as the model wrote it.
  const keyOf = (key: string) => known.get(normalKey(key)) ?? key.trim()
  return ops.map((op): MemoryOperation => {
    switch (op.type) {
      case 'add_fact':
      case 'update_fact': {
        const key = keyOf(op.key)
        known.set(normalKey(key), key)
        return {
          op: 'fact.set',
          key,
          value: op.value,
          ...(op.confidence === undefined ? {} : { confidence: op.confidence }),
          ...(op.type === 'add_fact' && op.tags?.length ? { tags: op.tags } : {}),
          ...expiry(op.expiresAt),
          reason: op.reason,
        }
      }
      case 'delete_fact':
        return { op: 'fact.delete', key: keyOf(op.key), reason: op.reason }
      case 'append_block':
        return { op: 'block.append', label: op.label, text: op.text, reason: op.reason }
      case 'replace_block':
        return { op: 'block.replace', label: op.label, oldText: op.old_text, newText: op.new_text, reason: op.reason }
      case 'add_passage':
        return { op: 'passage.create', text: op.text, ...(op.tags?.length ? { tags: op.tags } : {}), ...expiry(op.expiresAt), reason: op.reason }
      default:
        return toKnowledgeOperation(op)
    }
  })
}

function toDrafts(observations: readonly ModelObservation[]): ObservationDraft[] {
  return observations.map((o) => {
    const observedAt = isoTime(o.date)
    const expiresAt = isoTime(o.expiresAt)
    return { text: o.text, priority: o.priority, ...(observedAt === undefined ? {} : { observedAt }), ...(expiresAt === undefined ? {} : { expiresAt }) }
  })
}

function modelId(model: LanguageModel, response?: { modelId?: string }): string {
  return response?.modelId || (typeof model === 'string' ? model : model.modelId) || 'unknown'
}

/** The usage of one AI SDK call, as Engram records it. */
function usageOf(
  model: LanguageModel,
  result: {
    usage: {
      inputTokens?: number | undefined
      outputTokens?: number | undefined
      inputTokenDetails?: { cacheReadTokens?: number | undefined; cacheWriteTokens?: number | undefined }
    }
    response?: { modelId?: string }
  },
): ModelUsage[] {
  const input = result.usage.inputTokens ?? 0
  const cacheRead = result.usage.inputTokenDetails?.cacheReadTokens ?? 0
  const cacheWrite = result.usage.inputTokenDetails?.cacheWriteTokens ?? 0
  return [
    {
      model: modelId(model, result.response),
      inputTokens: Math.max(0, input - cacheRead - cacheWrite),
      outputTokens: result.usage.outputTokens ?? 0,
      ...(cacheRead > 0 ? { cacheReadTokens: cacheRead } : {}),
      ...(cacheWrite > 0 ? { cacheWriteTokens: cacheWrite } : {}),
    },
  ]
}

/**
 * An extractor on any AI SDK language model, for the `extractor` option of `openMemory`,
 * `runtimeModule` and `connectMemory`. It runs in the background: `turns.end` queues the turn,
 * and one structured-output call per job sees the exchange and the memory most related to it
 * (hybrid search over facts and passages, the blocks, every existing key) and answers
 * operations with a reason each — add, update or delete a fact, append to or replace a block,
 * add a passage, or nothing. With `observe` (the default) long sessions get observations and
 * reflections from the same model. Each call's tokens go to `usage`.
 *
 * @example
 * const memory = await openMemory({ appId, userId, extractor: aiExtractor({ model: openai('gpt-4.1-mini'), dailyTokenBudget: 200_000 }) })
 * @throws MemoryError `invalid_input` for a missing model or bad options.
 */
export function aiExtractor(options: AiExtractorOptions): BackgroundExtractor {
  if (typeof options !== 'object' || options === null) throw new MemoryError('invalid_input', 'aiExtractor needs options { model }')
  const unknown = Object.keys(options).find((k) => !OPTIONS.includes(k) && (options as unknown as Record<string, unknown>)[k] !== undefined)
  if (unknown !== undefined)
    throw new MemoryError('invalid_input', `aiExtractor has an unknown option ${JSON.stringify(unknown)}; known: ${OPTIONS.join(', ')}`)
  const { model } = options
  if (model === undefined || model === null || (typeof model !== 'string' && typeof model !== 'object'))
    throw new MemoryError('invalid_input', 'aiExtractor needs a model: an AI SDK language model or a gateway model id')
  if (options.instructions !== undefined && typeof options.instructions !== 'string') throw new MemoryError('invalid_input', 'instructions must be a string')
  const limits: PromptLimits = { ...PROMPT_LIMITS, ...(options.limits ?? {}) }
  for (const [name, value] of Object.entries(limits))
    if (!Number.isInteger(value) || value < 0) throw new MemoryError('invalid_input', `limits.${name} must be an integer ≥ 0`)
  const settings: ExtractionSettings = {}
  for (const name of SETTINGS) if (options[name] !== undefined) settings[name] = options[name]
  const system = options.instructions ? `${EXTRACTION_SYSTEM}\n${options.instructions}` : EXTRACTION_SYSTEM
  const maxRetries = options.maxRetries ?? 0

  async function observation(systemPrompt: string, prompt: string): Promise<ObservationAnswer> {
    const result = await generateText({ model, system: systemPrompt, prompt, output: Output.object({ schema: observationsSchema }), maxRetries })
    return { observations: toDrafts(result.output.observations), usage: usageOf(model, result) }
  }

  return {
    settings,
    async extract(exchange, view): Promise<ExtractionAnswer> {
      const memory = await relatedMemory(view, exchange, limits)
      const result = await generateText({
        model,
        system,
        prompt: extractionPrompt(exchange, memory, limits),
        output: Output.object({ schema: extractionSchema }),
        maxRetries,
      })
      return { operations: toOperations(result.output.operations, memory.keys), usage: usageOf(model, result) }
    },
    ...(options.observe === false
      ? {}
      : {
          observe: (input) => observation(OBSERVER_SYSTEM, observerPrompt(input)),
          reflect: (input) => observation(REFLECTOR_SYSTEM, reflectorPrompt(input)),
        }),
  }
}
