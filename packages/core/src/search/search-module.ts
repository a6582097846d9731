import { MemoryError } from '../store/errors.js'
import { loadOnUse } from '../store/load-on-use.js'
import { type MemoryModule, storeOf } from '../store/module.js'
import { INDEX_REBUILD_KEY } from '../store/rows.js'
import { checkOptions } from '../store/validate.js'
import type { Analyzer } from './analysis/analyzer.js'
import type { SearchFn } from './search.js'
import { englishAnalyzer } from './analysis/analyzer.js'
import { createTextIndex, INDEX_TABLES, searchEngineOf } from './index/text-index.js'
import { startForeignWrites, type WriteNotice } from './cache/foreign-writes.js'
import { keyedAnalyzer } from '../encryption/slot.js'
import type { Embedder } from '../store/store-context.js'

/** Options of {@link searchModule}. */
export interface SearchModuleOptions {
  /** Enables vector and hybrid search. */
  embedder?: Embedder
  /** Turns text into search terms; swap per language. Default: English (stop words, Porter stemmer). */
  analyzer?: Analyzer
}

/** Options for tests and benchmarks only (search internals); accepted, not documented for apps. */
export const SEARCH_INTERNAL_OPTIONS = [
  'textIndex',
  'mergeAt',
  'mergeDelayMs',
  'purgeAt',
  'inlineMergeAt',
  'segmentAt',
  'onMerge',
  'onWarm',
  'onForeignWrite',
  'vectorPrecision',
] as const

/**
 * Full-text search (BM25 kept in IndexedDB) over every indexed kind of the
 * store's other modules, plus vectors and hybrid ranking with an embedder.
 * Writes index from the start; the query code loads on the first search (at
 * open with an embedder, whose queue runs in the background).
 */
export function searchModule(options: SearchModuleOptions = {}): MemoryModule<'search'> {
  const { embedder: e, analyzer } = checkOptions('searchModule options', options, [
    'embedder',
    'analyzer',
    ...SEARCH_INTERNAL_OPTIONS,
  ] as (keyof SearchModuleOptions)[])
  if (analyzer !== undefined && typeof analyzer?.terms !== 'function')
    throw new MemoryError('invalid_input', 'analyzer must have terms(text), e.g. createAnalyzer({ … })')
  if (e !== undefined && (typeof e?.embed !== 'function' || !Number.isInteger(e.dimensions) || e.dimensions < 1)) {
    throw new MemoryError('invalid_input', 'embedder must be { dimensions: positive integer, embed(texts) }')
  }
  const loadRebuild = loadOnUse('index rebuild', () => import('./index/index-rebuild.js'))
  return {
    name: 'search',
    tables: INDEX_TABLES,
    // A schema upgrade that replaced the index layout leaves a note (search/index-rebuild.ts); the
    // rebuild's code loads only then, and the store opens once the index is whole again.
    async open(c) {
      const ctx = storeOf(c)
      if ((await ctx.db.meta.get(INDEX_REBUILD_KEY)) === undefined) return
      const { finishIndexRebuild } = await loadRebuild()
      await finishIndexRebuild(ctx, keyedAnalyzer(analyzer ?? englishAnalyzer, ctx.crypto))
    },
    install(c) {
      const ctx = storeOf(c)
      // With at-rest encryption on, the index stores and queries keyed hashes of the analyzer's terms.
      const engine = createTextIndex(ctx.db, { ...options, analyzer: keyedAnalyzer(analyzer ?? englishAnalyzer, ctx.crypto) })
      ctx.index = engine
      // Loaded before the caller's transaction opens (a dynamic import inside it would end the transaction).
      ctx.rebuildIndex = async () => (await loadRebuild()).wholeIndexRebuild(ctx, engine)
      ctx.status.enable('embedder', options.embedder !== undefined)
    },
    create(c) {
      const ctx = storeOf(c)
      // Background merges stop with the store, whether or not it was ever searched.
      const engine = searchEngineOf(ctx.index)
      if (engine) ctx.onClose.push(() => engine.stop())
      // Other connections' writes drop what this one holds in memory (foreign-writes.ts).
      startForeignWrites(ctx, engine, (options as { onForeignWrite?: (notice: WriteNotice) => void }).onForeignWrite)
      const load = loadOnUse('search', () => import('./search.js'))
      let search: SearchFn | undefined
      const searchOf = async (): Promise<SearchFn> => {
        const { createSearch } = await load()
        ctx.assertOpen()
        search ??= createSearch(ctx)
        return search
      }
      if (options.embedder !== undefined)
        searchOf().catch((error: unknown) => {
          if (!(error instanceof MemoryError && error.code === 'closed')) ctx.status.fail('embedder', error)
        })
      return { search: async (projectId, query, searchOptions) => (await searchOf())(projectId, query, searchOptions) }
    },
  }
}
