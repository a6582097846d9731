import { invalidInput, MemoryError } from '../store/errors.js'
import { checkSync, MAX_PROJECT_NAME, trackSync } from './project-rows.js'
import type { ProjectsApi } from './projects.js'
import type { ProjectRow } from '../store/rows.js'
import { USER_PROJECT, type StoreContext } from '../store/store-context.js'
import { checkId, checkOptions, checkString } from '../store/validate.js'
import { write } from '../store/write.js'

/** `projects.update`, `archive` and `setSync`: loaded on the first of them (stores rarely edit projects). */
export function createProjectEdits(ctx: StoreContext): Pick<ProjectsApi, 'update' | 'archive' | 'setSync'> {
  const { db } = ctx
  const track = (project: ProjectRow): void => trackSync(ctx, project)

  return {
    async update(id, changes) {
      checkId('id', id)
      const { name, sync, spaceId } = checkOptions('changes', changes, ['name', 'sync', 'spaceId'])
      if (name !== undefined) checkString('name', name, { nonEmpty: true, maxLength: MAX_PROJECT_NAME })
      const syncSetting = sync === undefined ? undefined : checkSync(sync)
      if (spaceId !== undefined && spaceId !== null) checkId('spaceId', spaceId)
      const project = await write(ctx, ['projects', 'spaces'], async (w) => {
        const current = await db.projects.get(id)
        if (!current) throw new MemoryError('not_found', `No project with id ${JSON.stringify(id)}`)
        const next: ProjectRow = { ...current, updatedAt: ctx.now() }
        if (spaceId === null) delete next.spaceId
        else if (spaceId !== undefined) {
          if (!(await db.table('spaces').get(spaceId))) throw new MemoryError('not_found', `No space with id ${JSON.stringify(spaceId)}`)
          next.spaceId = spaceId
        }
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
    async setSync(id, sync) {
      checkId('id', id)
      const { enabled, messages } = checkOptions('sync', sync, ['enabled', 'messages'])
      if (enabled !== undefined && typeof enabled !== 'boolean') throw invalidInput('sync.enabled must be a boolean')
      if (messages !== undefined && typeof messages !== 'boolean') throw invalidInput('sync.messages must be a boolean')
      const project = await write(ctx, ['projects'], async (w) => {
        const current = await db.projects.get(id)
        if (!current) throw new MemoryError('not_found', `No project with id ${JSON.stringify(id)}`)
        const next: ProjectRow = { ...current, sync: { ...current.sync }, updatedAt: ctx.now() }
        if (messages !== undefined) next.sync.messages = messages
        next.sync.enabled = enabled ?? (messages === true ? true : current.sync.enabled)
        await db.projects.put(next)
        w.change('projects', 'put', id, id)
        return next
      })
      track(project)
      return project
    },
  }
}
