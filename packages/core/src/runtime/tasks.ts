import { pending } from '../pending.js'
import type { StoreContext } from '../store-context.js'

/** How a task repeats. */
export type Repeat = 'daily' | 'weekly' | 'monthly' | null
/** A scheduled task. */
export interface Task {
  id: string; projectId: string; description: string; dueAt: number; repeat: Repeat; kind?: string
  status: 'pending' | 'done' | 'failed' | 'cancelled'; retries: number; lastError?: string; createdAt: number
}

/** Scheduled tasks. */
export interface TasksApi {
  create(task: { projectId: string; description: string; dueAt: number; repeat?: Repeat; kind?: string }): Promise<Task>
  due(now?: number): Promise<Task[]>
  complete(id: string): Promise<Task>
  fail(id: string, error: string, options: { maxRetries: number }): Promise<{ retrying: boolean }>
  cancel(idPrefix: string): Promise<boolean>
  update(idPrefix: string, changes: { description?: string; dueAt?: number; repeat?: Repeat }): Promise<boolean>
  defer(id: string, dueAt: number): Promise<void>
  list(options?: { projectId?: string; status?: Task['status'] }): Promise<Task[]>
}

/** Creates the tasks namespace of a store. */
export function createTasks(ctx: StoreContext): TasksApi {
  return pending('tasks', ctx)
}
