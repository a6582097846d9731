import type { Exchange, MemoryOperation, MemoryView } from '../runtime/turn-extraction.js'

/** The tokens one model call used, as a background extractor reports it (recorded with `usage.append`). */
export interface ModelUsage {
  /** The model's id, e.g. `gpt-4.1-mini` (its price is looked up in the store's pricing table). */
  model: string
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
}

/** What a background extractor's `extract` answers: the operations, and the usage of the calls it made. */
export interface ExtractionAnswer {
  operations: MemoryOperation[]
  usage?: ModelUsage[]
}

/** A message as the observer sees it. */
export interface ObservedMessage {
  id: string
  role: 'user' | 'assistant' | 'system' | 'tool'
  content: string
  createdAt: number
  seq: number
}

/** One dated, prioritised observation an observer or reflector writes. */
export interface ObservationDraft {
  text: string
  priority: 'high' | 'medium' | 'low'
  /** When what it observes happened (epoch ms); the observed messages' time when left out. */
  observedAt?: number
  /** After this time (epoch ms) the observation leaves context and search, and is purged. */
  expiresAt?: number
}

/** What `observe` receives: a session's messages not yet observed, oldest first. */
export interface ObservationInput {
  projectId: string
  sessionId: string
  messages: ObservedMessage[]
  /** The session's current observations, oldest first (the observer continues them, never repeats them). */
  observations: { text: string; priority: ObservationDraft['priority']; observedAt: number }[]
}

/** What `reflect` receives: the session's observations, which its answer replaces. */
export interface ReflectionInput {
  projectId: string
  sessionId: string
  observations: { id: string; text: string; priority: ObservationDraft['priority']; observedAt: number }[]
}

/** What `observe` and `reflect` answer. */
export interface ObservationAnswer {
  observations: ObservationDraft[]
  usage?: ModelUsage[]
}

/** How the background queue runs extraction (every field optional). */
export interface ExtractionSettings {
  /** Tokens (input + output, as usage reports them) a project may spend on extraction per UTC day; past it the queue waits for the next day and says so in `memory.status`. */
  dailyTokenBudget?: number
  /** When the queue falls behind, turns of one session are batched into one call up to this many prompt tokens (default 4,000). */
  batchTokens?: number
  /** Attempts of one job before it is set aside as failed (default 5). */
  maxAttempts?: number
  /** The first retry's delay in ms; each next one doubles it (default 1,000). */
  retryDelayMs?: number
  /** Unobserved message tokens of a session that start an observation (default 30,000; 0 turns observation off). */
  observeTokens?: number
  /** Observation tokens of a session that start a reflection (default 40,000). */
  reflectTokens?: number
  /**
   * How long a turn in flight (begun, its reply not yet recorded) holds the project's jobs, at
   * most, in ms (default 5,000): a job never reads a half-written turn, and a turn never ended
   * holds nothing past this.
   */
  turnHoldMs?: number
}

/**
 * An extractor that runs in the background: `turns.end` queues the turn and returns at once;
 * a durable queue in IndexedDB calls `extract` (and `observe` / `reflect` for long sessions)
 * one job at a time, retries with backoff, and applies each answer once. `aiExtractor` of
 * `@engram/ai-sdk` is one.
 */
export interface BackgroundExtractor {
  /** Turns one exchange (or a batch of turns, `exchange.turns`) into memory writes. */
  extract(exchange: Exchange, view: MemoryView): Promise<ExtractionAnswer | MemoryOperation[]>
  /** Writes observations of a session's older messages (observational memory); absent: no observation. */
  observe?(input: ObservationInput, view: MemoryView): Promise<ObservationAnswer>
  /** Condenses a session's observations into fewer; absent: no reflection. */
  reflect?(input: ReflectionInput, view: MemoryView): Promise<ObservationAnswer>
  readonly settings?: ExtractionSettings
}

/** A background job's kind. */
export type ExtractionJobKind = 'extract' | 'observe' | 'reflect'
