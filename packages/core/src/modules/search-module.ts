import { MemoryError } from '../errors.js'
import { type MemoryModule, storeOf } from '../module.js'
import { checkOptions } from '../validate.js'
import type { Analyzer } from '../search/analyzer.js'
import { createSearch } from '../search/search.js'
import { englishAnalyzer } from '../search/analyzer.js'
import { finishIndexRebuild, rebuildIndex } from '../search/index-rebuild.js'
import { createTextIndex, INDEX_TABLES } from '../search/text-index.js'
import { keyedAnalyzer } from '../encryption/slot.js'
import type { Embedder } from '../store-context.js'

/** Options of {@link searchModule}. */
export interface SearchModuleOptions {
  /** Enables vector and hybrid search. */
  embedder?: Embedder
  /** Turns text into search terms; swap per language. Default: English (stop words, Porter stemmer). */
  analyzer?: Analyzer
}

/**
 * Full-text search (BM25 kept in IndexedDB) over every indexed kind of the
 * store's other modules, plus vectors and hybrid ranking with an embedder.
 */
export function searchModule(options: SearchModuleOptions = {}): MemoryModule<'search'> {
  const { embedder: e, analyzer } = checkOptions('searchModule options', options, [
    'embedder',
    'analyzer',
    'textIndex',
    'mergeAt',
    'mergeDelayMs',
    'purgeAt',
    'onMerge',
  ] as (keyof SearchModuleOptions)[])
  if (analyzer !== undefined && typeof analyzer?.terms !== 'function')
    throw new MemoryError('invalid_input', 'analyzer must have terms(text), e.g. createAnalyzer({ … })')
  if (e !== undefined && (typeof e?.embed !== 'function' || !Number.isInteger(e.dimensions) || e.dimensions < 1)) {
    throw new MemoryError('invalid_input', 'embedder must be { dimensions: positive integer, embed(texts) }')
  }
  return {
    name: 'search',
    tables: INDEX_TABLES,
    database: { rebuildIndex: (tx) => rebuildIndex(tx, analyzer ?? englishAnalyzer) },
    async open(c) {
      const ctx = storeOf(c)
      await finishIndexRebuild(ctx, keyedAnalyzer(analyzer ?? englishAnalyzer, ctx.crypto))
    },
    install(c) {
      const ctx = storeOf(c)
      // With at-rest encryption on, the index stores and queries keyed hashes of the analyzer's terms.
      const engine = createTextIndex(ctx.db, { ...options, analyzer: keyedAnalyzer(analyzer ?? englishAnalyzer, ctx.crypto) })
      ctx.index = engine
      ctx.rebuildIndex = async (w) => {
        if (!engine.enabled) return
        const db = ctx.db
        const [vectors, queue] = await Promise.all([db.table('vectors').toArray(), db.table('embedQueue').toArray()])
        await engine.reset!(w)
        await db.table('textCorpus').clear()
        await rebuildIndex(w.tx, engine.analyzer)
        await Promise.all([vectors.length ? db.table('vectors').bulkPut(vectors) : undefined, queue.length ? db.table('embedQueue').bulkPut(queue) : undefined])
      }
      ctx.status.enable('embedder', options.embedder !== undefined)
    },
    create: (ctx) => ({ search: createSearch(storeOf(ctx)) }),
  }
}
