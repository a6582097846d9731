import { MemoryError } from '../store/errors.js'
import { requireProject } from '../projects/projects.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkLimit, checkOptions, checkString } from '../store/validate.js'
import { read, type WriteScope, write } from '../store/write.js'
import {
  checkEntityInput,
  checkEntitySize,
  checkList,
  checkName,
  checkObservation,
  checkType,
  type EntityInput,
  joinProvenance,
  MAX_ALIASES,
  MAX_OBSERVATIONS,
} from './entity-input.js'
import { canonicalEntity, resolveName } from './entity-resolve.js'
import { editObservations } from './observation-set.js'
import { type Entity, entityDoc, entityId, type EntityRow, entityTable, nameKey, nameKeysOf, toEntity } from './entity-rows.js'

export type { Entity, EntityInput }

/** Options of `entities.list`. */
export interface ListEntitiesOptions {
  /** Only entities of this type (case and accents ignored). */
  type?: string
  /** At most this many (default 100, 1–10,000). */
  limit?: number
}
/** Options of `entities.resolve`. */
export interface ResolveEntityOptions {
  /** Only an entity of this type. */
  type?: string
}

/** Named things and what is known of them, per project; they sync like facts. */
export interface EntitiesApi {
  /**
   * Creates an entity, or adds to the one its name or an alias already names (of the same type):
   * new aliases and observations are appended, nothing is removed.
   * @example const dana = await memory.entities.upsert('p', { name: 'Dana', type: 'person', observations: ['Likes climbing'] })
   * @throws MemoryError `invalid_input` (bad project id, name or type without letters or digits, unknown field),
   * `limit_exceeded` (name over 200 characters, observation over 2,000, more than 100 aliases or 1,000 observations),
   * `not_found` (unknown or archived project).
   */
  upsert(projectId: string, input: EntityInput): Promise<Entity>
  /** The entity stored under `id` (a merged one too, with `mergedInto`), or undefined. @throws MemoryError `invalid_input`. */
  get(projectId: string, id: string): Promise<Entity | undefined>
  /**
   * The live entity a name or alias names, case and accents ignored, followed through merges.
   * @example await memory.entities.resolve('p', 'dána') // the entity named Dana
   * @throws MemoryError `invalid_input`.
   */
  resolve(projectId: string, name: string, options?: ResolveEntityOptions): Promise<Entity | undefined>
  /**
   * The live entities a text names (a name or alias of up to four words, case and accents
   * ignored), in the order they are first named; one lookup for the whole text.
   * @example await memory.entities.mentioned('p', 'Where does dana work now?') // [Dana]
   * @throws MemoryError `invalid_input`, `limit_exceeded` (text over 10,000 characters).
   */
  mentioned(projectId: string, text: string, options?: { limit?: number }): Promise<Entity[]>
  /** The project's live entities, by name. @throws MemoryError `invalid_input`. */
  list(projectId: string, options?: ListEntitiesOptions): Promise<Entity[]>
  /** Adds aliases to a live entity. @throws MemoryError `invalid_input`, `not_found`, `limit_exceeded`, `conflict` (the alias is another entity's name). */
  addAliases(projectId: string, id: string, aliases: string[]): Promise<Entity>
  /** Appends observations to a live entity. @returns those that were new. @throws MemoryError `invalid_input`, `not_found`, `limit_exceeded`. */
  addObservations(projectId: string, id: string, observations: string[]): Promise<string[]>
  /** Removes observations (exact text) from a live entity. @returns those that were there. @throws MemoryError `invalid_input`, `not_found`. */
  removeObservations(projectId: string, id: string, observations: string[]): Promise<string[]>
  /**
   * Merges entity `fromId` into `intoId`: its name and aliases become aliases of `intoId`, its
   * observations and relations move there, and it remains as a pointer (`mergedInto`), so its
   * names and id still lead to `intoId`. A relation that would join the entity to itself is deleted.
   * @example await memory.entities.merge('p', danaFromChat.id, dana.id)
   * @throws MemoryError `invalid_input` (the same entity, or a merge that would make a cycle), `not_found`, `limit_exceeded`.
   */
  merge(projectId: string, fromId: string, intoId: string): Promise<Entity>
  /** Deletes an entity (a tombstone, so it syncs) and every relation it is the subject or object of. @returns false when there was none. @throws MemoryError `invalid_input`. */
  delete(projectId: string, id: string): Promise<boolean>
}

/** The entity edits that move or remove relations (made with the relations: relations/entity-graph-edits.ts). */
export type EntityGraphEdits = Pick<EntitiesApi, 'merge' | 'delete'>

/** Tables an entity write touches (the index's included). */
export function entityTables(ctx: StoreContext): string[] {
  return ['projects', 'entities', ...ctx.index.tables]
}

/** Stores an entity row, its index document and its change, inside a write. */
export async function storeEntityRow(ctx: StoreContext, w: WriteScope, row: EntityRow): Promise<void> {
  await entityTable(ctx).put(row)
  const live = row.deletedAt === undefined && row.mergedInto === undefined
  await (live ? ctx.index.put(w, entityDoc(row)) : ctx.index.remove(w, `entity:${row.id}`))
  w.change('entities', row.deletedAt === undefined ? 'put' : 'delete', row.id, row.projectId)
}

/** The live entity `id` of a project, inside a transaction. @throws MemoryError `not_found`. */
export async function requireEntity(ctx: StoreContext, projectId: string, id: string): Promise<EntityRow> {
  const row = await entityTable(ctx).get(id)
  if (!row || row.projectId !== projectId || row.deletedAt !== undefined)
    throw new MemoryError('not_found', `No entity ${JSON.stringify(id)} in project ${JSON.stringify(projectId)}`)
  const canonical = await canonicalEntity(ctx, row)
  if (!canonical || canonical.deletedAt !== undefined)
    throw new MemoryError('not_found', `Entity ${JSON.stringify(id)} was merged into an entity that was deleted`)
  return canonical
}

/** Creates the entities namespace of a store (merge and delete are added by the relations, which they touch). */
export function createEntities(ctx: StoreContext): Omit<EntitiesApi, keyof EntityGraphEdits> {
  const tables = () => entityTables(ctx)
  const update = async (projectId: string, id: string, edit: (row: EntityRow, w: WriteScope) => EntityRow | undefined) =>
    write(ctx, tables(), async (w) => {
      const row = await requireEntity(ctx, projectId, id)
      const next = edit(row, w)
      if (next) await storeEntityRow(ctx, w, next)
      return next ?? row
    })
  return {
    async upsert(projectId, input) {
      checkId('projectId', projectId)
      const e = checkEntityInput(input)
      return write(ctx, tables(), async (w) => {
        await requireProject(ctx, projectId)
        const now = ctx.now()
        const found = (await resolveName(ctx, projectId, e.name, e.type)) ?? (await firstAliasMatch(ctx, projectId, e))
        const id = found?.id ?? entityId(projectId, e.type, e.name)
        // A deleted entity of that name starts afresh under its id.
        const stored = found ?? (await entityTable(ctx).get(id))
        const base = found ?? { id, projectId, type: e.type, name: e.name, aliases: [] as string[], observations: [] as string[], createdAt: now }
        const names = new Set([nameKey(base.name), ...base.aliases.map(nameKey)])
        const aliases = [...base.aliases]
        for (const a of [e.name, ...e.aliases]) if (!names.has(nameKey(a))) names.add(nameKey(a)) && aliases.push(a)
        const observations = [...base.observations, ...e.observations.filter((o) => !base.observations.includes(o))]
        checkEntitySize(aliases, observations)
        if (found && aliases.length === found.aliases.length && observations.length === found.observations.length) return toEntity(found)
        const hlc = w.hlc(stored?.hlc)
        // A deleted entity named again starts afresh: its old observations stay removed (tombstones), so no device brings them back.
        const prior = found ?? { observations: [], observationTombstones: stored ? editObservations(stored, [], hlc).observationTombstones : [], hlc }
        const row: EntityRow = {
          ...base,
          aliases,
          ...editObservations(prior, observations, hlc),
          nameKeys: nameKeysOf(projectId, base.name, aliases),
          updatedAt: now,
          hlc,
        }
        delete row.deletedAt
        const provenance = joinProvenance(found?.provenance, e.provenance)
        if (provenance) row.provenance = provenance
        await storeEntityRow(ctx, w, row)
        return toEntity(row)
      })
    },

    async get(projectId, id) {
      checkId('projectId', projectId)
      checkId('id', id)
      const row = await read(ctx, ['entities'], () => entityTable(ctx).get(id))
      return row && row.projectId === projectId && row.deletedAt === undefined ? toEntity(row) : undefined
    },

    async resolve(projectId, name, options) {
      checkId('projectId', projectId)
      const n = checkName('name', name)
      const o = checkOptions('options', options, ['type'])
      const type = o.type === undefined ? undefined : checkType('options.type', o.type)
      const row = await read(ctx, ['entities'], () => resolveName(ctx, projectId, n, type))
      return row ? toEntity(row) : undefined
    },

    async mentioned(projectId, text, options) {
      checkId('projectId', projectId)
      checkString('text', text, { maxLength: MAX_MENTION_TEXT })
      const limit = checkLimit('options.limit', checkOptions('options', options, ['limit']).limit, 10, 100)
      const grams = wordGrams(text)
      if (grams.length === 0) return []
      const rows = await read(ctx, ['entities'], async () => {
        // One equality read per word run, all issued at once (an anyOf cursor pays a round trip per key).
        const found = (await Promise.all(grams.map((g) => entityTable(ctx).where('nameKeys').equals(`${projectId}\u0001${g.key}`).toArray()))).flat()
        const out: { row: EntityRow; at: number }[] = []
        for (const row of found) {
          if (row.projectId !== projectId || row.deletedAt !== undefined) continue
          const canonical = await canonicalEntity(ctx, row)
          if (!canonical || canonical.deletedAt !== undefined) continue
          const keys = new Set(row.nameKeys.map((k) => k.slice(projectId.length + 1)))
          const at = grams.find((g) => keys.has(g.key))?.at ?? Infinity
          const seen = out.find((o) => o.row.id === canonical.id)
          if (seen) seen.at = Math.min(seen.at, at)
          else out.push({ row: canonical, at })
        }
        return out
      })
      return rows
        .sort((a, b) => a.at - b.at || (a.row.id < b.row.id ? -1 : 1))
        .slice(0, limit)
        .map((o) => toEntity(o.row))
    },

    async list(projectId, options) {
      checkId('projectId', projectId)
      const o = checkOptions('options', options, ['type', 'limit'])
      const type = o.type === undefined ? undefined : nameKey(checkType('options.type', o.type))
      const limit = checkLimit('options.limit', o.limit, 100, 10_000)
      const rows = await read(ctx, ['entities'], () => entityTable(ctx).where('[projectId+type]').between([projectId, ''], [projectId, '\uffff']).toArray())
      return rows
        .filter((r) => r.deletedAt === undefined && r.mergedInto === undefined && (type === undefined || nameKey(r.type) === type))
        .sort((a, b) => (nameKey(a.name) < nameKey(b.name) ? -1 : nameKey(a.name) > nameKey(b.name) ? 1 : a.id < b.id ? -1 : 1))
        .slice(0, limit)
        .map(toEntity)
    },

    async addAliases(projectId, id, aliases) {
      checkId('projectId', projectId)
      checkId('id', id)
      const list = checkList('aliases', aliases, MAX_ALIASES, checkName)
      return toEntity(
        await write(ctx, tables(), async (w) => {
          const row = await requireEntity(ctx, projectId, id)
          const names = new Set([nameKey(row.name), ...row.aliases.map(nameKey)])
          const added = list.filter((a) => !names.has(nameKey(a)) && names.add(nameKey(a)))
          if (added.length === 0) return row
          for (const a of added) {
            const other = await resolveName(ctx, projectId, a, row.type)
            if (other && other.id !== row.id)
              throw new MemoryError('conflict', `${JSON.stringify(a)} already names entity ${JSON.stringify(other.id)}: merge them instead`)
          }
          const next = [...row.aliases, ...added]
          checkEntitySize(next, row.observations)
          const out: EntityRow = { ...row, aliases: next, nameKeys: nameKeysOf(projectId, row.name, next), updatedAt: ctx.now(), hlc: w.hlc(row.hlc) }
          await storeEntityRow(ctx, w, out)
          return out
        }),
      )
    },

    async addObservations(projectId, id, observations) {
      checkId('projectId', projectId)
      checkId('id', id)
      const list = checkList('observations', observations, MAX_OBSERVATIONS, checkObservation)
      let added: string[] = []
      await update(projectId, id, (row, w) => {
        added = list.filter((o) => !row.observations.includes(o))
        if (added.length === 0) return undefined
        const next = [...row.observations, ...added]
        checkEntitySize(row.aliases, next)
        const hlc = w.hlc(row.hlc)
        return { ...row, ...editObservations(row, next, hlc), updatedAt: ctx.now(), hlc }
      })
      return added
    },

    async removeObservations(projectId, id, observations) {
      checkId('projectId', projectId)
      checkId('id', id)
      const list = checkList('observations', observations, MAX_OBSERVATIONS, checkObservation)
      let removed: string[] = []
      await update(projectId, id, (row, w) => {
        removed = list.filter((o) => row.observations.includes(o))
        if (removed.length === 0) return undefined
        const hlc = w.hlc(row.hlc)
        return {
          ...row,
          ...editObservations(
            row,
            row.observations.filter((o) => !removed.includes(o)),
            hlc,
          ),
          updatedAt: ctx.now(),
          hlc,
        }
      })
      return removed
    },
  }
}

/** The live entity of the input's type that one of its aliases names, if any. */
async function firstAliasMatch(ctx: StoreContext, projectId: string, e: Pick<Required<EntityInput>, 'aliases' | 'type'>): Promise<EntityRow | undefined> {
  for (const alias of e.aliases) {
    const found = await resolveName(ctx, projectId, alias, e.type)
    if (found) return found
  }
  return undefined
}

/** Longest text `mentioned` reads (characters). */
export const MAX_MENTION_TEXT = 10_000
/** Longest name, in words, `mentioned` looks for. */
const MAX_GRAM = 4

/** Every run of one to four words of a text as a name key, with the position of its first word (distinct keys). */
export function wordGrams(text: string): { key: string; at: number }[] {
  const words = nameKey(text)
    .split(' ')
    .filter((w) => w !== '')
  const out = new Map<string, number>()
  for (let i = 0; i < words.length; i++) {
    for (let n = 1; n <= MAX_GRAM && i + n <= words.length; n++) {
      const key = words.slice(i, i + n).join(' ')
      if (!out.has(key)) out.set(key, i)
    }
  }
  return [...out].map(([key, at]) => ({ key, at }))
}
