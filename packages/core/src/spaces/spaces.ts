import { MemoryError } from '../store/errors.js'
import { newId } from '../store/ids.js'
import { checkSync, type ProjectSync } from '../projects/projects.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkOptions, checkString } from '../store/validate.js'
import { read, readOne, write } from '../store/write.js'

/** A level between the user and projects (work, family, …); its sync setting is the default of its new projects. */
export interface Space {
  id: string
  name: string
  sync: ProjectSync
  createdAt: number
  updatedAt: number
}

/** What {@link SpacesApi.create} takes. */
export interface SpaceInput {
  name: string
  id?: string
  sync?: ProjectSync
}

/** Longest space name (characters). */
export const MAX_SPACE_NAME = 200
const TABLES = ['spaces', 'projects']

/** Spaces of a store: groups of projects. */
export interface SpacesApi {
  /**
   * Creates a space (id made on the device unless given; sync off unless given).
   * @throws MemoryError `conflict` (id taken), `invalid_input` (bad name, id, sync or option), `limit_exceeded` (name over 200 characters).
   */
  create(input: SpaceInput): Promise<Space>
  /** The space, or undefined. @throws MemoryError `invalid_input`. */
  get(id: string): Promise<Space | undefined>
  /** Every space, oldest first. */
  list(): Promise<Space[]>
  /** Renames a space. @throws MemoryError `not_found`, `invalid_input`, `limit_exceeded`. */
  rename(id: string, name: string): Promise<Space>
  /**
   * Changes a space's name or sync setting. The sync setting is the default of projects created
   * in the space later; projects already in it keep theirs.
   * @throws MemoryError `not_found`, `invalid_input`, `limit_exceeded`.
   */
  update(id: string, changes: { name?: string; sync?: ProjectSync }): Promise<Space>
  /**
   * Deletes an empty space.
   * @throws MemoryError `not_found` (no such space), `conflict` (a project, archived ones included, is still in it: move or keep them).
   */
  delete(id: string): Promise<void>
}

/** Checks a space name. @throws MemoryError `invalid_input`, `limit_exceeded`. */
function checkName(name: unknown): string {
  return checkString('name', name, { nonEmpty: true, maxLength: MAX_SPACE_NAME }).trim()
}

/** Creates the spaces namespace of a store. */
export function createSpaces(ctx: StoreContext): SpacesApi {
  const table = () => ctx.db.table<Space, string>('spaces')

  async function change(id: string, name: string | undefined, sync: ProjectSync | undefined): Promise<Space> {
    return write(ctx, TABLES, async (w) => {
      const current = await table().get(id)
      if (!current) throw new MemoryError('not_found', `No space with id ${JSON.stringify(id)}`)
      const next: Space = { ...current, updatedAt: ctx.now() }
      if (name !== undefined) next.name = name
      if (sync !== undefined) next.sync = sync
      await table().put(next)
      w.change('spaces', 'put', id, '')
      return next
    })
  }

  return {
    async create(input) {
      const o = checkOptions('space', input, ['name', 'id', 'sync'])
      const name = checkName(o.name)
      const id = o.id === undefined ? newId(ctx.now()) : checkId('id', o.id)
      const sync = o.sync === undefined ? { enabled: false } : checkSync(o.sync)
      const now = ctx.now()
      const space: Space = { id, name, sync, createdAt: now, updatedAt: now }
      await write(ctx, TABLES, async (w) => {
        if (await table().get(id)) throw new MemoryError('conflict', `A space with id ${JSON.stringify(id)} already exists`)
        await table().add(space)
        w.change('spaces', 'put', id, '')
      })
      return space
    },
    async get(id) {
      checkId('id', id)
      return readOne(ctx, () => table().get(id))
    },
    async list() {
      const all = await read(ctx, TABLES, () => table().toArray())
      return all.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
    },
    async rename(id, name) {
      checkId('id', id)
      return change(id, checkName(name), undefined)
    },
    async update(id, changes) {
      checkId('id', id)
      const o = checkOptions('changes', changes, ['name', 'sync'])
      return change(id, o.name === undefined ? undefined : checkName(o.name), o.sync === undefined ? undefined : checkSync(o.sync))
    },
    async delete(id) {
      checkId('id', id)
      await write(ctx, TABLES, async (w) => {
        if (!(await table().get(id))) throw new MemoryError('not_found', `No space with id ${JSON.stringify(id)}`)
        const inside = await ctx.db.projects.filter((p) => p.spaceId === id).count()
        if (inside > 0)
          throw new MemoryError('conflict', `Space ${JSON.stringify(id)} still holds ${inside} project(s), archived ones included; move them out first`)
        await table().delete(id)
        w.change('spaces', 'delete', id, '')
      })
    },
  }
}
