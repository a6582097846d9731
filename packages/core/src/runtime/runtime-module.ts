import { MemoryError } from '../store/errors.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import type { Memory } from '../compose/memory.js'
import { type MemoryModule, storeOf } from '../store/module.js'
import { checkPricing } from './pricing.js'
import { checkOptions } from '../store/validate.js'
import type { Extractor } from './turns.js'
import type { PricingTable } from './usage.js'

/** Options of {@link runtimeModule}. */
export interface RuntimeModuleOptions {
  /** Turns a finished turn into memory writes. */
  extractor?: Extractor
  /** Model prices for usage cost estimates (e.g. `defaultPricing` from `@engram/core/pricing`); without one every call is unpriced. */
  pricing?: PricingTable
}

/**
 * The agent runtime: journal, runs, tasks, usage, lessons and the turn lifecycle (whose extractor writes facts,
 * blocks and passages, so it needs those modules and `context`). Its code loads on the first call of any of them.
 */
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
      // The module's requirements guarantee the namespaces turns use.
      const load = loadOnUse('runtime', async () => (await import('./create-runtime.js')).createRuntime(ctx, memory as Memory, o.extractor, o.pricing))
      return {
        journal: methodsOnUse(async () => (await load()).journal, ['append', 'load', 'page', 'sessions', 'findOutcome', 'pendingApproval']),
        runs: methodsOnUse(
          async () => (await load()).runs,
          ['setCheckpoint', 'checkpoints', 'deleteCheckpoints', 'appendToolEvent', 'toolEvents', 'setStatus', 'get'],
        ),
        tasks: methodsOnUse(async () => (await load()).tasks, ['create', 'due', 'complete', 'fail', 'cancel', 'update', 'defer', 'list']),
        usage: methodsOnUse(async () => (await load()).usage, ['append', 'session', 'project', 'total']),
        lessons: methodsOnUse(async () => (await load()).lessons, ['appendOutcome', 'create', 'list', 'outcomes']),
        turns: methodsOnUse(async () => (await load()).turns, ['begin', 'end', 'partial']),
      }
    },
  }
}
