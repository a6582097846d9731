import { MemoryError } from '../store/errors.js'
import type { ProjectRow } from '../store/rows.js'
import { USER_PROJECT, type StoreContext } from '../store/store-context.js'
import { checkId, checkOptions, checkString } from '../store/validate.js'
import { newId } from '../store/ids.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { read, readOne, write } from '../store/write.js'
import { MAX_PROJECT_NAME, trackSync, checkSync, requireProject, liveProject } from './project-rows.js'

/** A project: the scope of most memory, with its sync setting. */
export interface Project {
  id: string
  name: string
  sync: ProjectSync
  createdAt: number
  updatedAt: number
  archivedAt?: number
  /** The space the project is in (`memory.spaces`); none when absent. */
  spaceId?: string
}
/** Sync settings of a project. */
export interface ProjectSync {
  enabled: boolean
  /**
   * Sessions and messages sync too (opt-in, off when absent): each session is one document
   * on the relay (see docs/sessions-and-messages.md for the privacy and size trade-off).
   * Only takes effect while `enabled` is true.
   */
  messages?: boolean
}

/** Projects of a store. The project `user` always exists. */
export interface ProjectsApi {
  /**
   * Creates a project (id made on the device unless given), optionally in a space, whose sync
   * setting is then the default. @throws MemoryError `conflict` when the id is taken, `invalid_input`
   * on a bad name, id, sync setting or option, `limit_exceeded` for a name over 200 characters,
   * `not_found` for an unknown space.
   */
  create(input: { name: string; id?: string; sync?: ProjectSync; spaceId?: string }): Promise<Project>
  /** The project (archived ones too), or undefined. @throws MemoryError `invalid_input` on a bad id. */
  get(id: string): Promise<Project | undefined>
  /** Oldest first; archived projects only with `includeArchived`; only a space's with `spaceId`. @throws MemoryError `invalid_input` on bad options. */
  list(options?: { includeArchived?: boolean; spaceId?: string }): Promise<Project[]>
  /**
   * Renames a project, changes its sync setting, or moves it into a space (`spaceId`) or out of
   * any (`spaceId: null`). @throws MemoryError `not_found` when there is no such project or space,
   * `invalid_input` on a bad name, sync setting or option.
   */
  update(id: string, changes: { name?: string; sync?: ProjectSync; spaceId?: string | null }): Promise<Project>
  /** Hides a project from lists and search; its memory stays. @throws MemoryError `not_found`, `invalid_input` for `user`. */
  archive(id: string): Promise<void>
  /**
   * Changes a project's sync settings, keeping those not given. `{ messages: true }` also turns
   * the project's sync on unless `enabled: false` is given; `{ enabled: false }` stops every
   * kind syncing and keeps the `messages` choice for later.
   * @example await memory.projects.setSync(projectId, { messages: true })
   * @throws MemoryError `not_found` for an unknown project, `invalid_input` on a bad setting.
   */
  setSync(id: string, sync: { enabled?: boolean; messages?: boolean }): Promise<Project>
}

/** Creates the projects namespace of a store. */
export function createProjects(ctx: StoreContext): ProjectsApi {
  const { db } = ctx
  // Renaming, archiving and changing sync settings are rare: their code loads on first call.
  const edits = loadOnUse('project edits', async () => (await import('./project-edits.js')).createProjectEdits(ctx))

  const track = (project: ProjectRow): void => trackSync(ctx, project)

  return {
    async create(input) {
      const { name, id, sync, spaceId } = checkOptions('project', input, ['name', 'id', 'sync', 'spaceId'])
      checkString('name', name, { nonEmpty: true, maxLength: MAX_PROJECT_NAME })
      const projectId = id === undefined ? newId(ctx.now()) : checkId('id', id)
      const syncSetting = sync === undefined ? undefined : checkSync(sync)
      if (spaceId !== undefined) checkId('spaceId', spaceId)
      const now = ctx.now()
      const project: ProjectRow = { id: projectId, name: name!.trim(), sync: syncSetting ?? { enabled: false }, createdAt: now, updatedAt: now }
      await write(ctx, ['projects', 'spaces'], async (w) => {
        if (spaceId !== undefined) {
          const space = await db.table<{ sync: ProjectSync }, string>('spaces').get(spaceId)
          if (!space) throw new MemoryError('not_found', `No space with id ${JSON.stringify(spaceId)}; create it with memory.spaces.create()`)
          project.spaceId = spaceId
          // A space's sync setting is the default of its new projects.
          if (syncSetting === undefined) project.sync = { enabled: space.sync.enabled }
        }
        if (await db.projects.get(projectId)) throw new MemoryError('conflict', `A project with id ${JSON.stringify(projectId)} already exists`)
        await db.projects.add(project)
        w.change('projects', 'put', projectId, projectId)
      })
      track(project)
      return project
    },
    async get(id) {
      checkId('id', id)
      return readOne(ctx, () => db.projects.get(id))
    },
    async list(options) {
      const { includeArchived, spaceId } = checkOptions('options', options, ['includeArchived', 'spaceId'])
      if (spaceId !== undefined) checkId('spaceId', spaceId)
      const all = await read(ctx, ['projects'], () => db.projects.toArray())
      return all
        .filter((p) => (includeArchived || p.archivedAt === undefined) && (spaceId === undefined || p.spaceId === spaceId))
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
    },
    ...methodsOnUse(edits, ['update', 'archive', 'setSync']),
  }
}

/** Makes sure the built-in `user` project exists and loads which projects sync. */
export async function prepareProjects(ctx: StoreContext): Promise<void> {
  await write(ctx, ['projects'], async (w) => {
    if (await ctx.db.projects.get(USER_PROJECT)) return
    const now = ctx.now()
    await ctx.db.projects.add({ id: USER_PROJECT, name: 'User', sync: { enabled: false }, createdAt: now, updatedAt: now })
    w.change('projects', 'put', USER_PROJECT, USER_PROJECT)
  })
  for (const p of await ctx.db.projects.toArray()) trackSync(ctx, p)
}

export { MAX_PROJECT_NAME, trackSync, checkSync, requireProject, liveProject }
