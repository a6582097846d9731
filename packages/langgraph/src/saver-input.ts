import { MemoryError } from '@engram/core'
import type { RunnableConfig } from '@langchain/core/runnables'
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint'
import type { RunsMemory } from './run-blobs.js'

const OPTION_KEYS = new Set(['prefix', 'serde'])

/** Checks the saver's memory and options before anything is stored. */
export function checkSaverOptions(
  memory: RunsMemory,
  options: { prefix?: string; serde?: SerializerProtocol },
): { prefix?: string; serde?: SerializerProtocol } {
  if (typeof memory !== 'object' || memory === null || typeof memory.runs !== 'object' || memory.runs === null) {
    throw new MemoryError('invalid_input', 'EngramSaver needs a memory with the runs namespace (openMemory, or createMemory with runtimeModule)')
  }
  if (typeof options !== 'object' || options === null) throw new MemoryError('invalid_input', 'EngramSaver options must be an object')
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && !OPTION_KEYS.has(key)) throw new MemoryError('invalid_input', `EngramSaver does not know the option "${key}"`)
  }
  const { prefix, serde } = options
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix === '' || prefix.length > 100 || prefix.trim() !== prefix)) {
    throw new MemoryError('invalid_input', 'EngramSaver prefix must be a non-empty string of at most 100 characters without surrounding whitespace')
  }
  if (serde !== undefined && (typeof serde?.dumpsTyped !== 'function' || typeof serde?.loadsTyped !== 'function')) {
    throw new MemoryError('invalid_input', 'EngramSaver serde must have dumpsTyped and loadsTyped')
  }
  return { prefix, serde }
}

/** The ids a config names: `thread_id`, `checkpoint_ns` (default ''), `checkpoint_id`. */
export function configIds(config: RunnableConfig, opts?: { nsOptional?: false }): { threadId?: string; ns: string; checkpointId?: string }
export function configIds(config: RunnableConfig, opts: { nsOptional: true }): { threadId?: string; ns?: string; checkpointId?: string }
export function configIds(config: RunnableConfig, opts: { nsOptional?: boolean } = {}): { threadId?: string; ns?: string; checkpointId?: string } {
  const c = (config?.configurable ?? {}) as Record<string, unknown>
  const threadId = optionalString(c.thread_id, 'thread_id')
  const ns = optionalString(c.checkpoint_ns, 'checkpoint_ns') ?? (opts.nsOptional ? undefined : '')
  const checkpointId = optionalString(c.checkpoint_id, 'checkpoint_id') || undefined
  return { threadId, ns, checkpointId }
}

/** The thread id, or `invalid_input` naming the call. */
export function requireThreadId(threadId: string | undefined, call: string): string {
  if (threadId === undefined || threadId === '') {
    throw new MemoryError('invalid_input', `${call} needs config.configurable.thread_id: pass { configurable: { thread_id } } when running the graph`)
  }
  return threadId
}

function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'number') return String(value)
  if (typeof value !== 'string') throw new MemoryError('invalid_input', `config.configurable.${name} must be a string`)
  return value
}
