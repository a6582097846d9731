import { MemoryError } from '../errors.js'
import type { Memory } from '../memory.js'
import { type MemoryModule, storeOf } from '../module.js'
import { checkPricing } from '../runtime/pricing.js'
import { checkOptions } from '../validate.js'
import { createJournal } from '../runtime/journal.js'
import { createLessons } from '../runtime/lessons.js'
import { createRuns } from '../runtime/runs.js'
import { createTasks } from '../runtime/tasks.js'
import { createTurns, type Extractor } from '../runtime/turns.js'
import { createUsage, type PricingTable } from '../runtime/usage.js'

/** Options of {@link runtimeModule}. */
export interface RuntimeModuleOptions {
  /** Turns a finished turn into memory writes. */
  extractor?: Extractor
  /** Model prices for usage cost estimates (e.g. `defaultPricing` from `@engram/core/pricing`); without one every call is unpriced. */
  pricing?: PricingTable
}

/** The agent runtime: journal, runs, tasks, usage, lessons and the turn lifecycle (whose extractor writes facts, blocks and passages, so it needs those modules and `context`). */
export function runtimeModule(options: RuntimeModuleOptions = {}): MemoryModule<'journal' | 'runs' | 'tasks' | 'usage' | 'lessons' | 'turns'> {
  const o = checkOptions('runtimeModule options', options, ['extractor', 'pricing'])
  if (o.extractor !== undefined && typeof o.extractor !== 'function') throw new MemoryError('invalid_input', 'extractor must be a function')
  const pricingProblem = checkPricing(o.pricing)
  if (pricingProblem !== undefined) throw new MemoryError('invalid_input', pricingProblem)
  return {
    name: 'runtime',
    tables: ['journal', 'journalSessions', 'runs', 'checkpoints', 'toolEvents', 'tasks', 'usage', 'lessons', 'outcomes', 'turns'],
    requires: ['facts', 'conversations', 'archive', 'context'],
    create(c, memory) {
      const ctx = storeOf(c)
      ctx.status.enable('extractor', options.extractor !== undefined)
      return {
        journal: createJournal(ctx),
        runs: createRuns(ctx),
        tasks: createTasks(ctx),
        usage: createUsage(ctx, options.pricing),
        lessons: createLessons(ctx),
        // The module's requirements guarantee the namespaces turns use.
        turns: createTurns(ctx, memory as Memory, options.extractor),
      }
    },
  }
}
