import { MemoryError } from '@engram/core'
import type { StoreMemory } from './engram-store.js'

/** Options of {@link EngramStore}. */
export interface EngramStoreOptions {
  /** The Engram project that holds the items; created on the first write when missing. Default `langgraph-store`. */
  projectId?: string
  /** The name given to the project when the store creates it. Default `LangGraph store`. */
  projectName?: string
  /**
   * What of an item `query` searches: `{ fields }` as LangGraph index paths
   * (default `['$']`, the whole value), or `false` to index nothing. A `put`
   * with its own `index` overrides this for that item.
   */
  index?: { fields?: string[] } | false
}

const KEYS = new Set(['projectId', 'projectName', 'index'])

/** Checks the store's memory and options. @throws MemoryError `invalid_input`. */
export function checkStoreOptions(
  memory: StoreMemory,
  options: EngramStoreOptions,
): { projectId: string; projectName: string; fields: readonly string[] | false } {
  if (typeof memory !== 'object' || memory === null || typeof memory.facts !== 'object' || typeof memory.projects !== 'object') {
    throw new MemoryError('invalid_input', 'EngramStore needs a memory with projects and facts (openMemory, or createMemory with factsModule)')
  }
  if (typeof options !== 'object' || options === null) throw new MemoryError('invalid_input', 'EngramStore options must be an object')
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && !KEYS.has(key)) throw new MemoryError('invalid_input', `EngramStore does not know the option "${key}"`)
  }
  const projectId = options.projectId ?? 'langgraph-store'
  if (typeof projectId !== 'string' || projectId === '' || projectId.trim() !== projectId)
    throw new MemoryError('invalid_input', 'EngramStore projectId must be a non-empty string without surrounding whitespace')
  const projectName = options.projectName ?? 'LangGraph store'
  if (typeof projectName !== 'string' || projectName.trim() === '') throw new MemoryError('invalid_input', 'EngramStore projectName must be a non-empty string')
  const index = options.index
  if (index === false) return { projectId, projectName, fields: false }
  if (index !== undefined && (typeof index !== 'object' || index === null))
    throw new MemoryError('invalid_input', 'EngramStore index must be { fields } or false')
  const fields = index?.fields ?? ['$']
  if (!Array.isArray(fields) || fields.some((f) => typeof f !== 'string' || f === ''))
    throw new MemoryError('invalid_input', 'EngramStore index.fields must be non-empty strings')
  return { projectId, projectName, fields }
}
