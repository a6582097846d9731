import type { ProjectSync } from './projects.js'
import { invalidInput, MemoryError } from '../store/errors.js'
import type { ProjectRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId } from '../store/validate.js'

/** Longest project name (characters). */
export const MAX_PROJECT_NAME = 200

/** Records whether a project's memory (and its conversations) go to the sync outbox. */
export function trackSync(ctx: StoreContext, project: ProjectRow): void {
  const live = project.sync.enabled && project.archivedAt === undefined
  if (live) ctx.syncedProjects.add(project.id)
  else ctx.syncedProjects.delete(project.id)
  if (live && project.sync.messages === true) ctx.conversationProjects.add(project.id)
  else ctx.conversationProjects.delete(project.id)
}

/** Checks a `{ enabled }` sync setting (undefined: off). @throws MemoryError `invalid_input`. */
export function checkSync(sync: unknown): ProjectSync {
  if (sync === undefined) return { enabled: false }
  if (typeof sync !== 'object' || sync === null || typeof (sync as ProjectSync).enabled !== 'boolean') {
    throw invalidInput('sync must be { enabled: boolean, messages?: boolean }')
  }
  const { messages } = sync as ProjectSync
  if (messages !== undefined && typeof messages !== 'boolean') throw invalidInput('sync.messages must be a boolean')
  return messages === undefined ? { enabled: (sync as ProjectSync).enabled } : { enabled: (sync as ProjectSync).enabled, messages }
}

/**
 * Checks a project id and that the project exists and is not archived.
 * @throws MemoryError `not_found` for an unknown or archived project.
 */
export async function requireProject(ctx: StoreContext, projectId: unknown): Promise<ProjectRow> {
  checkId('projectId', projectId)
  return liveProject(ctx, projectId as string)
}

/**
 * The project of a checked id when it exists and is not archived: one read, chained through
 * Dexie promises (no native async function), so it may run beside other requests of a transaction.
 * @throws MemoryError `not_found` for an unknown or archived project.
 */
export function liveProject(ctx: StoreContext, projectId: string): Promise<ProjectRow> {
  return ctx.db.projects.get(projectId).then((project) => {
    if (!project) throw new MemoryError('not_found', `No project with id ${JSON.stringify(projectId)}; create it with memory.projects.create()`)
    if (project.archivedAt !== undefined) throw new MemoryError('not_found', `Project ${JSON.stringify(projectId)} is archived`)
    return project
  })
}
