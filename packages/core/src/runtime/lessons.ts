import { pending } from '../pending.js'
import type { Source } from '../schema.js'
import type { StoreContext } from '../store-context.js'

/** A distilled lesson. */
export interface Lesson { projectId: string; domain: string; rule: string; occurrences: number; createdAt: number; updatedAt: number }

/** Outcomes and lessons learned. */
export interface LessonsApi {
  recordOutcome(outcome: { projectId: string; domain: string; score: number; lesson: string; source?: Source }): Promise<void>
  store(projectId: string, domain: string, rule: string): Promise<Lesson>
  list(projectId: string, options?: { domain?: string }): Promise<Lesson[]>
}

/** Creates the lessons namespace of a store. */
export function createLessons(ctx: StoreContext): LessonsApi {
  return pending('lessons', ctx)
}
