import type { Summarizer } from '../context/context.js'
import { BASE_OPTIONS, type BaseMemoryOptions, composeMemory } from './create-memory.js'
import type { Memory } from './memory.js'
import { archiveModule } from '../archive/archive-module.js'
import { contextModule } from '../context/context-module.js'
import { conversationsModule } from '../sessions/conversations-module.js'
import { factsModule } from '../facts/facts-module.js'
import { importerModule } from '../dump/importer-module.js'
import { runtimeModule } from '../runtime/runtime-module.js'
import { limitationsModule } from '../limitations/limitations-module.js'
import { patternsModule } from '../patterns/patterns-module.js'
import { spacesModule } from '../spaces/spaces-module.js'
import { artifactsModule } from '../artifacts/artifacts-module.js'
import { peopleModule } from '../people/people-module.js'
import { knowledgeModule } from '../relations/knowledge-module.js'
import type { Cardinality } from '../relations/predicates.js'
import { SEARCH_INTERNAL_OPTIONS, searchModule } from '../search/search-module.js'
import type { Extractor } from '../runtime/turns.js'
import type { BackgroundExtractor } from '../extraction/extraction-types.js'
import type { PricingTable } from '../runtime/usage.js'
import type { Analyzer } from '../search/analysis/analyzer.js'
import type { Embedder } from '../store/store-context.js'
import { checkOptions } from '../store/validate.js'

export { databaseName } from './create-memory.js'

/** Options of {@link openMemory}: the base options plus every module's, flat. */
export interface MemoryOptions extends BaseMemoryOptions {
  /** Enables vector and hybrid search. */
  embedder?: Embedder
  /** Turns text into search terms; swap per language. Default: English (stop words, Porter stemmer). */
  analyzer?: Analyzer
  /** Condenses context overflow instead of dropping it. */
  summarizer?: Summarizer
  /** Turns a finished turn into memory writes. */
  extractor?: Extractor | BackgroundExtractor
  /** Model prices for usage cost estimates (e.g. `defaultPricing` from `@engram/core/pricing`). */
  pricing?: PricingTable
  /** Most bytes of artifacts kept on this device (default 256 MiB). */
  maxArtifactBytes?: number
  /** The cardinality of the app's own predicates (`knowledgeModule({ predicates })`). */
  predicates?: Record<string, Cardinality>
}

const OPTIONS = [
  ...BASE_OPTIONS,
  'embedder',
  'analyzer',
  'summarizer',
  'extractor',
  'pricing',
  'maxArtifactBytes',
  'predicates',
  ...SEARCH_INTERNAL_OPTIONS,
] as const

/**
 * Opens (creating on first use) the memory store of one app and user, with
 * every module. To ship only some modules, use `createMemory({ modules })`.
 *
 * @example
 * const memory = await openMemory({ appId: 'my-agent', userId: 'u_123' })
 * await memory.facts.set('user', 'name', 'Ada')
 * @example
 * // Encrypted at rest (docs/encryption.md): keep the salt with the app's settings.
 * const key = await deriveMemoryKey(passphrase, salt)
 * const memory = await openMemory({ appId: 'my-agent', userId: 'u_123', encryption: { key } })
 * @throws MemoryError `invalid_input` on bad or unknown options (a misspelt option is named), `conflict` when the
 * database was written by a newer version, `quota_exceeded` when storage is full, `crypto` when the store is
 * encrypted and the key is wrong or missing (nothing is read or written then).
 */
export async function openMemory(options: MemoryOptions): Promise<Memory> {
  const opts = checkOptions('options', options, OPTIONS as unknown as (keyof MemoryOptions)[]) as MemoryOptions &
    Record<(typeof SEARCH_INTERNAL_OPTIONS)[number], unknown>
  const search = {
    ...(opts.embedder ? { embedder: opts.embedder } : {}),
    ...(opts.analyzer ? { analyzer: opts.analyzer } : {}),
    ...Object.fromEntries(SEARCH_INTERNAL_OPTIONS.filter((k) => opts[k] !== undefined).map((k) => [k, opts[k]])),
  }
  const modules = [
    factsModule(),
    conversationsModule(),
    archiveModule(),
    searchModule(search),
    contextModule(opts.summarizer ? { summarizer: opts.summarizer } : {}),
    importerModule(),
    runtimeModule({ ...(opts.extractor ? { extractor: opts.extractor } : {}), ...(opts.pricing ? { pricing: opts.pricing } : {}) }),
    limitationsModule(),
    patternsModule(),
    spacesModule(),
    artifactsModule(opts.maxArtifactBytes === undefined ? {} : { maxBytes: opts.maxArtifactBytes }),
    peopleModule(),
    knowledgeModule(opts.predicates === undefined ? {} : { predicates: opts.predicates }),
  ]
  const base: BaseMemoryOptions = { appId: opts.appId, userId: opts.userId }
  for (const key of BASE_OPTIONS) if (opts[key] !== undefined) Object.assign(base, { [key]: opts[key] })
  return composeMemory({ ...base, modules })
}
