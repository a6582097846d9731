import type { Memory } from '../compose/memory.js'
import type { StoreContext } from '../store/store-context.js'
import { createJournal, type JournalApi } from './journal.js'
import { createLessons, type LessonsApi } from './lessons.js'
import { createRuns, type RunsApi } from './runs.js'
import { createTasks, type TasksApi } from './tasks.js'
import { createTurns, type Extractor, type TurnsApi } from './turns.js'
import { createUsage, type PricingTable, type UsageApi } from './usage.js'

/** The runtime module's namespaces. */
export interface RuntimeApis {
  journal: JournalApi
  runs: RunsApi
  tasks: TasksApi
  usage: UsageApi
  lessons: LessonsApi
  turns: TurnsApi
}

/** Creates the agent runtime's namespaces of a store (`memory` holds the namespaces turns write through). */
export function createRuntime(ctx: StoreContext, memory: Memory, extractor?: Extractor, pricing?: PricingTable): RuntimeApis {
  return {
    journal: createJournal(ctx),
    runs: createRuns(ctx),
    tasks: createTasks(ctx),
    usage: createUsage(ctx, pricing),
    lessons: createLessons(ctx),
    turns: createTurns(ctx, memory, extractor),
  }
}
