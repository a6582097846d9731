import { MemoryError } from '../store/errors.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import type { Memory } from '../compose/memory.js'
import { type MemoryModule, storeOf } from '../store/module.js'
import { checkPricing } from './pricing.js'
import { checkOptions } from '../store/validate.js'
import type { Extractor } from './turns.js'
import type { PricingTable } from './usage.js'
import type { BackgroundExtractor } from '../extraction/extraction-types.js'

/** Options of {@link runtimeModule}. */
export interface RuntimeModuleOptions {
  /**
   * Turns a finished turn into memory writes: a function runs inside `turns.end`; a
   * {@link BackgroundExtractor} (`aiExtractor` of `@engram/ai-sdk`) runs from a durable queue after it.
   */
  extractor?: Extractor | BackgroundExtractor
  /** Model prices for usage cost estimates (e.g. `defaultPricing` from `@engram/core/pricing`); without one every call is unpriced. */
  pricing?: PricingTable
}

/**
 * The agent runtime: journal, runs, tasks, usage, lessons and the turn lifecycle (whose extractor writes facts,
 * blocks and passages, so it needs those modules and `context`). Its code loads on the first call of any of them.
 */
export function runtimeModule(
  options: RuntimeModuleOptions = {},
): MemoryModule<'journal' | 'runs' | 'tasks' | 'usage' | 'lessons' | 'turns' | 'extraction' | 'observations'> {
  const o = checkOptions('runtimeModule options', options, ['extractor', 'pricing'])
  checkExtractor(o.extractor)
  const pricingProblem = checkPricing(o.pricing)
  if (pricingProblem !== undefined) throw new MemoryError('invalid_input', pricingProblem)
  return {
    name: 'runtime',
    tables: [
      'journal',
      'journalSessions',
      'runs',
      'checkpoints',
      'toolEvents',
      'tasks',
      'usage',
      'lessons',
      'outcomes',
      'turns',
      'extractionJobs',
      'extractionSpend',
      'observations',
    ],
    requires: ['facts', 'conversations', 'archive', 'context'],
    create(c, memory) {
      const ctx = storeOf(c)
      ctx.status.enable('extractor', options.extractor !== undefined)
      // The module's requirements guarantee the namespaces turns use.
      const load = loadOnUse('runtime', async () => (await import('./create-runtime.js')).createRuntime(ctx, memory as Memory, o.extractor, o.pricing))
      // A background extractor resumes the jobs a reload or a crash left as soon as the store opens.
      if (typeof o.extractor === 'object') void load().catch(() => {})
      // Memory that expires starts the runtime (its sweep): looked for at open and every minute, so a
      // store with none never loads it for that.
      else {
        let timer: ReturnType<typeof setTimeout> | undefined
        let closed = false
        ctx.onClose.push(() => {
          closed = true
          if (timer !== undefined) clearTimeout(timer)
        })
        const probe = (): void => {
          if (closed) return
          hasExpiring(ctx)
            .then((yes) => {
              if (yes) void load().catch(() => {})
              else if (!closed) timer = setTimeout(probe, PROBE_INTERVAL_MS)
            })
            .catch(() => {})
        }
        probe()
      }
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
        extraction: methodsOnUse(async () => (await load()).extraction, ['flush', 'retry', 'sweep']),
        observations: methodsOnUse(async () => (await load()).observations, ['list']),
      }
    },
  }
}

const SETTINGS = ['dailyTokenBudget', 'batchTokens', 'maxAttempts', 'retryDelayMs', 'observeTokens', 'reflectTokens', 'turnHoldMs'] as const

/** Checks an extractor option: a function, or `{ extract, observe?, reflect?, settings? }`. @throws MemoryError `invalid_input`. */
export function checkExtractor(extractor: unknown): void {
  if (extractor === undefined || typeof extractor === 'function') return
  const e = extractor as Partial<BackgroundExtractor>
  if (typeof e !== 'object' || e === null || typeof e.extract !== 'function')
    throw new MemoryError('invalid_input', 'extractor must be a function or { extract(), observe?(), reflect?(), settings? }')
  for (const name of ['observe', 'reflect'] as const)
    if (e[name] !== undefined && typeof e[name] !== 'function') throw new MemoryError('invalid_input', `extractor.${name} must be a function`)
  if (e.settings === undefined) return
  checkOptions('extractor.settings', e.settings, SETTINGS)
  for (const [name, value] of Object.entries(e.settings)) {
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (name === 'maxAttempts' && (value < 1 || !Number.isInteger(value))))
      throw new MemoryError('invalid_input', `extractor.settings.${name} must be a number ≥ ${name === 'maxAttempts' ? 1 : 0}`)
  }
}

/** How often a store whose runtime is not loaded looks for memory that expires (ms). */
const PROBE_INTERVAL_MS = 60_000

/** Whether the store holds any fact, passage or observation that expires. */
async function hasExpiring(ctx: ReturnType<typeof storeOf>): Promise<boolean> {
  const counts = await Promise.all(['facts', 'passages', 'observations'].map((t) => ctx.db.table(t).where('expiresAt').above(-1).limit(1).count()))
  return counts.some((n) => n > 0)
}
