import { invalidInput, MemoryError } from './errors.js'
import type { ProjectRow } from './schema.js'
import { USER_PROJECT, type StoreContext } from './store-context.js'
import { checkId, checkOptions, checkString } from './validate.js'
import { newId } from './ids.js'
import { read, readOne, write } from './write.js'

/** A project: the scope of most memory, with its sync setting. */
export interface Project {
  id: string
  name: string
  sync: ProjectSync
  createdAt: number
  updatedAt: number
  archivedAt?: number
}
/** Sync settings of a project. */
export interface ProjectSync {
  enabled: boolean
}

/** Projects of a store. The project `user` always exists. */
export interface ProjectsApi {
  /** Creates a project (id made on the device unless given). @throws MemoryError `conflict` when the id is taken, `invalid_input` on a bad name, id, sync setting or option, `limit_exceeded` for a name over 200 characters. */
  create(input: { name: string; id?: string; sync?: ProjectSync }): Promise<Project>
  /** The project (archived ones too), or undefined. @throws MemoryError `invalid_input` on a bad id. */
  get(id: string): Promise<Project | undefined>
  /** Oldest first; archived projects only with `includeArchived`. @throws MemoryError `invalid_input` on bad options. */
  list(options?: { includeArchived?: boolean }): Promise<Project[]>
  /** Renames a project or changes its sync setting. @throws MemoryError `not_found` when there is no such project, `invalid_input` on a bad name, sync setting or option. */
  update(id: string, changes: { name?: string; sync?: ProjectSync }): Promise<Project>
  /** Hides a project from lists and search; its memory stays. @throws MemoryError `not_found`, `invalid_input` for `user`. */
  archive(id: string): Promise<void>
}

const MAX_NAME = 200

/** Creates the projects namespace of a store. */
export function createProjects(ctx: StoreContext): ProjectsApi {
  const { db } = ctx

  function track(project: ProjectRow): void {
    if (project.sync.enabled && project.archivedAt === undefined) ctx.syncedProjects.add(project.id)
    else ctx.syncedProjects.delete(project.id)
  }

  return {
    async create(input) {
      const { name, id, sync } = checkOptions('project', input, ['name', 'id', 'sync'])
      checkString('name', name, { nonEmpty: true, maxLength: MAX_NAME })
      const projectId = id === undefined ? newId(ctx.now()) : checkId('id', id)
      const syncSetting = checkSync(sync)
      const now = ctx.now()
      const project: ProjectRow = { id: projectId, name: name!.trim(), sync: syncSetting, createdAt: now, updatedAt: now }
      await write(ctx, ['projects'], async (w) => {
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
      const { includeArchived } = checkOptions('options', options, ['includeArchived'])
      const all = await read(ctx, ['projects'], () => db.projects.toArray())
      return all.filter((p) => includeArchived || p.archivedAt === undefined).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
    },
    async update(id, changes) {
      checkId('id', id)
      const { name, sync } = checkOptions('changes', changes, ['name', 'sync'])
      if (name !== undefined) checkString('name', name, { nonEmpty: true, maxLength: MAX_NAME })
      const syncSetting = sync === undefined ? undefined : checkSync(sync)
      const project = await write(ctx, ['projects'], async (w) => {
        const current = await db.projects.get(id)
        if (!current) throw new MemoryError('not_found', `No project with id ${JSON.stringify(id)}`)
        const next: ProjectRow = { ...current, updatedAt: ctx.now() }
        if (name !== undefined) next.name = name.trim()
        if (syncSetting !== undefined) next.sync = syncSetting
        await db.projects.put(next)
        w.change('projects', 'put', id, id)
        return next
      })
      track(project)
      return project
    },
    async archive(id) {
      checkId('id', id)
      if (id === USER_PROJECT) throw invalidInput('The built-in project "user" cannot be archived')
      const project = await write(ctx, ['projects'], async (w) => {
        const current = await db.projects.get(id)
        if (!current) throw new MemoryError('not_found', `No project with id ${JSON.stringify(id)}`)
        if (current.archivedAt !== undefined) return current
        const next = { ...current, archivedAt: ctx.now(), updatedAt: ctx.now() }
        await db.projects.put(next)
        w.change('projects', 'put', id, id)
        return next
      })
      track(project)
    },
  }
}

function checkSync(sync: unknown): ProjectSync {
  if (sync === undefined) return { enabled: false }
  if (typeof sync !== 'object' || sync === null || typeof (sync as ProjectSync).enabled !== 'boolean') {
    throw invalidInput('sync must be { enabled: boolean }')
  }
  return { enabled: (sync as ProjectSync).enabled }
}

/** Makes sure the built-in `user` project exists and loads which projects sync. */
export async function prepareProjects(ctx: StoreContext): Promise<void> {
  await write(ctx, ['projects'], async (w) => {
    if (await ctx.db.projects.get(USER_PROJECT)) return
    const now = ctx.now()
    await ctx.db.projects.add({ id: USER_PROJECT, name: 'User', sync: { enabled: false }, createdAt: now, updatedAt: now })
    w.change('projects', 'put', USER_PROJECT, USER_PROJECT)
  })
  for (const p of await ctx.db.projects.toArray()) {
    if (p.sync.enabled && p.archivedAt === undefined) ctx.syncedProjects.add(p.id)
  }
}

/**
 * Checks a project id and that the project exists and is not archived.
 * @throws MemoryError `not_found` for an unknown or archived project.
 */
export async function requireProject(ctx: StoreContext, projectId: unknown): Promise<ProjectRow> {
  checkId('projectId', projectId)
  const project = await ctx.db.projects.get(projectId as string)
  if (!project) throw new MemoryError('not_found', `No project with id ${JSON.stringify(projectId)}; create it with memory.projects.create()`)
  if (project.archivedAt !== undefined) throw new MemoryError('not_found', `Project ${JSON.stringify(projectId)} is archived`)
  return project
}
