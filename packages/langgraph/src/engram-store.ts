import { type Fact, type Json, type Memory, MemoryError } from '@engram/core'
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  validateNamespace,
} from '@langchain/langgraph-checkpoint'
import { matchesFilter } from './item-filter.js'
import { itemFactKey, namespacePrefix, parseItemFactKey } from './item-keys.js'
import { indexText } from './item-text.js'
import { selectNamespaces } from './list-namespaces.js'
import { checkStoreOptions, type EngramStoreOptions } from './store-options.js'

/** What {@link EngramStore} needs of a memory: projects and facts; archive and search for `query`. */
export type StoreMemory = Pick<Memory, 'projects' | 'facts'> & Partial<Pick<Memory, 'archive' | 'search'>>

/** The fact value an item is kept as. */
interface ItemEnvelope {
  value: Record<string, Json>
  passageId?: string
}

const PAGE = 1000
/** Engram's search returns at most this many hits. */
const MAX_HITS = 1000
/** Hits resolved to items at once (each is two reads). */
const RESOLVE_BATCH = 25
const PASSAGE_SOURCE = 'langgraph-store'

/**
 * LangGraph.js long-term memory (`BaseStore`) on Engram: each item is a fact
 * of one project (so it syncs when that project syncs), and its indexed text
 * is an archive passage, so `search(prefix, { query })` is Engram's hybrid
 * search (BM25, plus vectors when the memory has an embedder).
 *
 * @example
 * const store = new EngramStore(memory, { projectId: 'agent-memory', index: { fields: ['text'] } })
 * await store.put(['users', 'u1', 'notes'], 'n1', { text: 'prefers dark mode' })
 * const hits = await store.search(['users', 'u1'], { query: 'dark theme', limit: 5 })
 */
export class EngramStore extends BaseStore {
  readonly #memory: StoreMemory
  readonly #projectId: string
  readonly #projectName: string
  readonly #fields: readonly string[] | false
  #project: Promise<void> | undefined

  /** @throws MemoryError `invalid_input` for a memory without facts or a bad option. */
  constructor(memory: StoreMemory, options: EngramStoreOptions = {}) {
    super()
    const checked = checkStoreOptions(memory, options)
    this.#memory = memory
    this.#projectId = checked.projectId
    this.#projectName = checked.projectName
    this.#fields = checked.fields
  }

  /** The Engram project that holds the items. */
  get projectId(): string {
    return this.#projectId
  }

  /**
   * Runs the operations in order (a get after a put in one batch sees the put).
   * @throws InvalidNamespaceError for a malformed namespace; MemoryError `invalid_input`, `limit_exceeded` (an item over 1 MiB as JSON), `not_found` (an archived project).
   */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = []
    for (const op of operations as Operation[]) {
      if ('namespacePrefix' in op) results.push(await this.#search(op))
      else if (!('namespace' in op)) results.push(await this.#listNamespaces(op))
      else if ('value' in op) results.push(await this.#put(op))
      else results.push(await this.#get(op))
    }
    return results as OperationResults<Op>
  }

  async #get(op: GetOperation): Promise<Item | null> {
    validateNamespace(op.namespace, { allowReservedRoot: true })
    const fact = await this.#memory.facts.get(this.#projectId, itemFactKey(op.namespace, checkKey(op.key)))
    return (fact === undefined ? undefined : toItem(fact)) ?? null
  }

  async #put(op: PutOperation): Promise<void> {
    validateNamespace(op.namespace, { allowReservedRoot: true })
    const factKey = itemFactKey(op.namespace, checkKey(op.key))
    const { facts, archive } = this.#memory
    const existing = await facts.get(this.#projectId, factKey)
    const oldPassage = existing === undefined ? undefined : envelopeOf(existing).passageId
    if (op.value === null) {
      if (existing !== undefined) await facts.delete(this.#projectId, factKey)
      if (oldPassage !== undefined) await archive?.delete(oldPassage)
      return
    }
    if (typeof op.value !== 'object' || Array.isArray(op.value)) throw new MemoryError('invalid_input', 'a store item value must be an object')
    await this.#ensureProject()
    const fields = op.index === undefined ? this.#fields : op.index
    const text = fields === false || archive === undefined ? undefined : indexText(op.value, fields)
    const envelope: Record<string, Json> = { value: op.value as Record<string, Json> }
    // The new passage first, the fact last: a crash in between leaves a passage no fact points to, which search ignores.
    if (text !== undefined) envelope.passageId = (await archive!.create(this.#projectId, text, { source: { tool: PASSAGE_SOURCE, note: factKey } })).id
    await facts.set(this.#projectId, factKey, envelope, { source: { tool: PASSAGE_SOURCE } })
    if (oldPassage !== undefined) await archive?.delete(oldPassage)
  }

  async #search(op: SearchOperation): Promise<SearchItem[]> {
    validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true })
    const offset = checkCount('offset', op.offset ?? 0)
    const limit = checkCount('limit', op.limit ?? 10)
    const prefix = namespacePrefix(op.namespacePrefix)
    if (op.query !== undefined && op.query.trim() !== '') return this.#query(op.query, prefix, op.filter, offset, limit)
    const found: SearchItem[] = []
    for await (const fact of this.#facts(prefix)) {
      const item = toItem(fact)
      if (item === undefined || !matchesFilter(item.value, op.filter)) continue
      found.push(item)
      if (found.length >= offset + limit) break
    }
    return found.slice(offset)
  }

  async #query(query: string, prefix: string, filter: Record<string, unknown> | undefined, offset: number, limit: number): Promise<SearchItem[]> {
    const { search, archive } = this.#memory
    if (search === undefined || archive === undefined)
      throw new MemoryError('invalid_input', 'a store search with `query` needs a memory with the archive and search modules')
    const wanted = offset + limit
    const found: SearchItem[] = []
    let checked = 0
    // Hits outside the prefix or filter are skipped; when too few remain, ask search for more (it returns at most 1,000).
    for (let n = Math.min(MAX_HITS, Math.max(50, wanted * 4)); ; n = Math.min(MAX_HITS, n * 4)) {
      const hits = await search(this.#projectId, query, { kinds: ['passage'], limit: n })
      for (let at = checked; at < hits.length && found.length < wanted; at += RESOLVE_BATCH) {
        const batch = hits.slice(at, at + RESOLVE_BATCH)
        const items = await Promise.all(batch.map((hit) => this.#itemOfHit(hit.id, prefix)))
        for (const [i, item] of items.entries()) {
          if (item !== undefined && matchesFilter(item.value, filter) && found.length < wanted) found.push({ ...item, score: batch[i]!.score })
        }
      }
      checked = hits.length
      if (found.length >= wanted || hits.length < n || n === MAX_HITS) break
    }
    return found.slice(offset)
  }

  /** The live item a passage indexes, if it is under `prefix` (a passage replaced since is ignored). */
  async #itemOfHit(passageId: string, prefix: string): Promise<Item | undefined> {
    const passage = await this.#memory.archive?.get(passageId)
    const factKey = passage?.source?.tool === PASSAGE_SOURCE ? passage.source.note : undefined
    if (factKey === undefined || !factKey.startsWith(prefix)) return undefined
    const fact = await this.#memory.facts.get(this.#projectId, factKey)
    return fact === undefined || envelopeOf(fact).passageId !== passageId ? undefined : toItem(fact)
  }

  async #listNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    const namespaces = new Map<string, string[]>()
    for await (const fact of this.#facts('')) {
      const parsed = parseItemFactKey(fact.key)
      if (parsed !== undefined && parsed.namespace.length > 0) namespaces.set(JSON.stringify(parsed.namespace), parsed.namespace)
    }
    return selectNamespaces([...namespaces.values()], op)
  }

  /** Every active fact of the project under a key prefix, in key order, page by page. */
  async *#facts(prefix: string): AsyncGenerator<Fact> {
    let after: string | undefined
    do {
      const page = await this.#memory.facts.list(this.#projectId, { prefix, limit: PAGE, ...(after === undefined ? {} : { after }) })
      yield* page.items
      after = page.next
    } while (after !== undefined)
  }

  #ensureProject(): Promise<void> {
    this.#project ??= (async () => {
      const { projects } = this.#memory
      if ((await projects.get(this.#projectId)) === undefined) await projects.create({ id: this.#projectId, name: this.#projectName })
    })().catch((error: unknown) => {
      this.#project = undefined
      throw error
    })
    return this.#project
  }
}

function envelopeOf(fact: Fact): Partial<ItemEnvelope> {
  const v = fact.value
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Partial<ItemEnvelope>) : {}
}

function toItem(fact: Fact): Item | undefined {
  const parsed = parseItemFactKey(fact.key)
  const value = envelopeOf(fact).value
  if (parsed === undefined || typeof value !== 'object' || value === null) return undefined
  return { value, key: parsed.key, namespace: parsed.namespace, createdAt: new Date(fact.createdAt), updatedAt: new Date(fact.updatedAt) }
}

function checkKey(key: unknown): string {
  if (typeof key !== 'string') throw new MemoryError('invalid_input', `a store item key must be a string, got ${typeof key}`)
  return key
}

function checkCount(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new MemoryError('invalid_input', `store search ${name} must be a non-negative integer`)
  return value
}
