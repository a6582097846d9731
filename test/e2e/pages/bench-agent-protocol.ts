// What the agent-path benchmark's Node driver (test/bench/agent-path.ts) and its worker (bench-agent.worker.ts) say to each other.

/** The two ways the same records are written. */
export type AgentVariant = 'engram' | 'raw'
/** What Node asks the worker to do. */
export type AgentRequest =
  | { cmd: 'init'; variant: AgentVariant; sentences: string[]; n: number; queries: number; create: boolean }
  | { cmd: 'write'; from: number; to: number }
  | { cmd: 'settle' }
  | { cmd: 'usage' }
  | { cmd: 'heap' }
  | { cmd: 'open-first-search' }
  | { cmd: 'search'; count: number; mini: boolean }
  | { cmd: 'build'; count: number }
/** Per-call milliseconds of one written block. */
export interface WriteSamples {
  append: number[]
  facts: number[]
}

/** Sessions written at once, as an app with several chats open. */
export const SESSIONS = 20
/** A fact is set after every this many messages. */
export const MESSAGES_PER_FACT = 10
