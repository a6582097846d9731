import type { Memory } from '../compose/memory.js'
import type { StoreContext } from '../store/store-context.js'
import { createJournal, type JournalApi } from './journal.js'
import { createLessons, type LessonsApi } from './lessons.js'
import { createRuns, type RunsApi } from './runs.js'
import { createTasks, type TasksApi } from './tasks.js'
import { createTurns, type Extractor, type TurnsApi } from './turns.js'
import { createUsage, type PricingTable, type UsageApi } from './usage.js'
import { DEFAULT_COORDINATOR_LIMITS } from './turn-coordinator.js'
import { createExtractionQueue, type ExtractionApi } from '../extraction/extraction-queue.js'
import type { BackgroundExtractor } from '../extraction/extraction-types.js'
import { startExpirySweep } from '../extraction/expiry-sweep.js'
import { createTurnHolds } from '../extraction/turn-holds.js'
import { createObservations, type ObservationsApi } from '../observations/observations.js'

/** The runtime module's namespaces. */
export interface RuntimeApis {
  journal: JournalApi
  runs: RunsApi
  tasks: TasksApi
  usage: UsageApi
  lessons: LessonsApi
  turns: TurnsApi
  extraction: ExtractionApi
  observations: ObservationsApi
}

/** Whether an extractor runs in the background (an object with `extract`) rather than inside `turns.end`. */
export function isBackground(extractor: Extractor | BackgroundExtractor | undefined): extractor is BackgroundExtractor {
  return typeof extractor === 'object' && extractor !== null
}

const IDLE = { flush: async () => ({ pending: 0, failed: 0 }), retry: async () => 0 }

/** Creates the agent runtime's namespaces of a store (`memory` holds the namespaces turns write through). */
export function createRuntime(ctx: StoreContext, memory: Memory, extractor?: Extractor | BackgroundExtractor, pricing?: PricingTable): RuntimeApis {
  const usage = createUsage(ctx, pricing)
  // The queue writes usage through the namespace this runtime makes (memory.usage may still be loading).
  const holds = isBackground(extractor) ? createTurnHolds() : undefined
  if (holds) ctx.onClose.push(() => holds.clear())
  const queue = isBackground(extractor) ? createExtractionQueue(ctx, { ...memory, usage } as Memory, extractor, holds) : undefined
  queue?.kick()
  const expiry = startExpirySweep(ctx, memory)
  const idle = {
    flush: async () => {
      ctx.assertOpen()
      return IDLE.flush()
    },
    retry: async () => {
      ctx.assertOpen()
      return IDLE.retry()
    },
  }
  return {
    journal: createJournal(ctx),
    runs: createRuns(ctx),
    tasks: createTasks(ctx),
    usage,
    lessons: createLessons(ctx),
    turns: createTurns(ctx, memory, isBackground(extractor) ? undefined : extractor, DEFAULT_COORDINATOR_LIMITS, queue, holds),
    extraction: { ...(queue ? { flush: queue.flush, retry: queue.retry } : idle), sweep: expiry.sweep },
    observations: createObservations(ctx),
  }
}
