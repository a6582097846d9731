import type { Summarizer } from './context.js'
import { MemoryError } from '../store/errors.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { type MemoryModule, storeOf } from '../store/module.js'
import { checkOptions } from '../store/validate.js'

/** Options of {@link contextModule}. */
export interface ContextModuleOptions {
  /** Condenses context overflow instead of dropping it. */
  summarizer?: Summarizer
}

/**
 * `context.build`: fits blocks, facts, recalled hits, summaries, recent
 * messages and lessons into a token budget. Uses whichever of those modules
 * the store has. Its drafting and fitting code loads on the first build.
 */
export function contextModule(options: ContextModuleOptions = {}): MemoryModule<'context'> {
  const { summarizer } = checkOptions('contextModule options', options, ['summarizer'])
  if (summarizer !== undefined && typeof summarizer?.summarize !== 'function')
    throw new MemoryError('invalid_input', 'summarizer must have summarize(texts, maxTokens)')
  return {
    name: 'context',
    tables: [],
    create(c, memory) {
      const ctx = storeOf(c)
      ctx.status.enable('summarizer', options.summarizer !== undefined)
      const load = loadOnUse('context', async () => (await import('./context.js')).createContextBuilder(ctx, memory, options.summarizer))
      return { context: methodsOnUse(load, ['build']) }
    },
  }
}
