import { pending } from '../pending.js'
import type { StoreContext } from '../store-context.js'
import type { Json } from '../validate.js'

/** A phase checkpoint of a run. */
export interface Checkpoint { runId: string; phase: string; status: string; output?: Json; error?: string; attempt: number; createdAt: number; updatedAt: number }
/** A tool call made during a run. */
export interface ToolEvent { runId: string; seq: number; tool: string; input?: Json; output?: Json; status: string; durationMs?: number; at: number }
/** A run's status and summary. */
export interface Run { runId: string; status: string; summary?: string; updatedAt: number }

/** Runs: checkpoints, tool events, status. */
export interface RunsApi {
  checkpoint(runId: string, phase: string, state: { status: string; output?: Json; error?: string; attempt?: number }): Promise<Checkpoint>
  checkpoints(runId: string): Promise<Checkpoint[]>
  clear(runId: string): Promise<number>
  recordToolEvent(runId: string, event: { tool: string; input?: Json; output?: Json; status: string; durationMs?: number }): Promise<ToolEvent>
  toolEvents(runId: string): Promise<ToolEvent[]>
  setStatus(runId: string, state: { status: string; summary?: string }): Promise<Run>
  get(runId: string): Promise<Run | undefined>
}

/** Creates the runs namespace of a store. */
export function createRuns(ctx: StoreContext): RunsApi {
  return pending('runs', ctx)
}
