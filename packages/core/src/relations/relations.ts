import { requireEntity } from '../entities/entities.js'
import { canonicalEntity, canonicalId, mergedIds } from '../entities/entity-resolve.js'
import { type Entity, type EntityRow, entityTable, toEntity } from '../entities/entity-rows.js'
import { requireProject } from '../projects/projects.js'
import { invalidInput, MemoryError } from '../store/errors.js'
import { newId } from '../store/ids.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkLimit, checkNumber, checkOneOf, checkOptions, checkTime, describe } from '../store/validate.js'
import { read, type WriteScope, write } from '../store/write.js'
import { cardinalityOf, type Cardinality, predicateKey } from './predicates.js'
import { type Direction, holdingAt, readingOrder, relationsOf, walkAround } from './relation-graph.js'
import { type CheckedRelation, checkPredicate, checkProvenance, checkRelationInput, checkWindow, type RelationInput } from './relation-input.js'
import { holdsAt, type Provenance, type Relation, type RelationRow, relationTable, toRelation } from './relation-rows.js'
import { joinProvenance } from '../entities/entity-input.js'
import { rederiveSubject, relationTables, rowsOfSubject, storeRelationRow } from './relation-store.js'
import { chainOrder } from './relation-windows.js'

export type { Relation, RelationInput, Direction, Cardinality }

/** Options of `relations.current` and `relations.asOf`. */
export interface RelationQueryOptions {
  /** Only this predicate (compared case-insensitively, spaces as underscores). */
  predicate?: string
  /** Relations the entity is the subject of (`out`), the object of (`in`), or both (default). */
  direction?: Direction
}
/** Options of `relations.around`. */
export interface AroundOptions {
  /** Hops from the entity (default 1, 1–4). */
  depth?: number
  /** At most this many relations (default 100, 1–1,000). */
  limit?: number
  /** Walk what was true at this time (default now). */
  asOf?: number
}
/** An entity's neighbourhood: the entities reached (the start first) and the relations between them. */
export interface Graph {
  entities: Entity[]
  relations: Relation[]
}
/** Options of `relations.list`. */
export interface ListRelationsOptions {
  /** Only relations holding at this time (default: all, ended ones too). */
  at?: number
  /** Only relations holding now (the store's clock); not with `at`. */
  current?: boolean
  /** At most this many (default 1,000, 1–100,000). */
  limit?: number
}

/** Most relations one `addMany` call writes. */
export const MAX_RELATIONS_PER_CALL = 10_000
/** Deepest `around` walk. */
export const MAX_AROUND_DEPTH = 4

/** Subject — predicate — object assertions with validity windows, per project; they sync like facts. */
export interface RelationsApi {
  /**
   * Records that `subject predicate object` (or `value`) holds from `validFrom` (default now).
   * Under a single-valued predicate (`works_at`, `lives_in`, …) the relation true at `validFrom`
   * is closed there, not deleted; under a multi-valued one (`likes`) they accumulate. An
   * assertion already true at `validFrom` is returned as it is.
   * @example await memory.relations.add('p', { subject: dana.id, predicate: 'works_at', object: acme.id, validFrom: Date.UTC(2026, 2, 1) })
   * @throws MemoryError `invalid_input` (bad ids or predicate, both or neither of object and value, validTo before validFrom,
   * unknown field), `not_found` (unknown project or entity), `limit_exceeded`.
   */
  add(projectId: string, input: RelationInput): Promise<Relation>
  /** Several `add`s in one transaction (all or none), in order. @throws MemoryError as `add`; `limit_exceeded` over 10,000. */
  addMany(projectId: string, inputs: RelationInput[]): Promise<Relation[]>
  /** The relation stored under `id`, or undefined. @throws MemoryError `invalid_input`. */
  get(projectId: string, id: string): Promise<Relation | undefined>
  /**
   * Ends a relation at `at` (default now); `options.provenance` says where the end was learned
   * (its message ids join the relation's).
   * @throws MemoryError `invalid_input` (`at` before its validFrom, a bad provenance), `not_found`.
   */
  end(projectId: string, id: string, at?: number, options?: { provenance?: Provenance }): Promise<Relation>
  /** Deletes a relation (a tombstone, so it syncs): under a single-valued predicate the one before it is closed by the one after, or reopens. @returns false when there was none. @throws MemoryError `invalid_input`. */
  delete(projectId: string, id: string): Promise<boolean>
  /** The relations of an entity true now. @throws MemoryError `invalid_input`, `not_found` (unknown entity). */
  current(projectId: string, entityId: string, options?: RelationQueryOptions): Promise<Relation[]>
  /**
   * The relations of an entity true at `time`.
   * @example (await memory.relations.asOf('p', dana.id, Date.UTC(2026, 4, 1), { predicate: 'works_at' }))[0]?.object // acme.id
   * @throws MemoryError `invalid_input`, `not_found`.
   */
  asOf(projectId: string, entityId: string, time: number, options?: RelationQueryOptions): Promise<Relation[]>
  /** Every assertion of `entity predicate`, oldest `validFrom` first, with its window (ended and replaced ones too). @throws MemoryError `invalid_input`, `not_found`. */
  history(projectId: string, entityId: string, predicate: string): Promise<Relation[]>
  /** The neighbourhood of an entity: a breadth-first walk over relations true now (or `asOf`). @throws MemoryError `invalid_input`, `not_found`. */
  around(projectId: string, entityId: string, options?: AroundOptions): Promise<Graph>
  /** The project's live relations (all, or those holding `at`), oldest first. @throws MemoryError `invalid_input`. */
  list(projectId: string, options?: ListRelationsOptions): Promise<Relation[]>
  /** Whether a predicate is single-valued (`one`) or multi-valued (`many`) in this store. @throws MemoryError `invalid_input`. */
  cardinality(predicate: string): Promise<Cardinality>
}

const sameObject = (row: RelationRow, r: CheckedRelation, object: string | undefined) =>
  object !== undefined ? row.objectId === object : row.objectId === undefined && row.value === r.value

/** Creates the relations namespace of a store. */
export function createRelations(ctx: StoreContext): RelationsApi {
  const tables = () => relationTables(ctx)
  const readTables = ['entities', 'relations']

  /** Writes one checked relation inside a write; returns its row and the subject to derive again (if any). */
  async function addOne(
    w: WriteScope,
    projectId: string,
    r: CheckedRelation,
    entities: Map<string, EntityRow>,
  ): Promise<{ row: RelationRow; subject?: string }> {
    const entity = async (id: string) => {
      let row = entities.get(id)
      if (!row) entities.set(id, (row = await requireEntity(ctx, projectId, id)))
      return row
    }
    const subject = await entity(r.subject)
    const object = r.object === undefined ? undefined : (await entity(r.object)).id
    if (object === subject.id) throw invalidInput(`A relation's object is its subject (${JSON.stringify(subject.id)})`)
    const now = ctx.now()
    const validFrom = r.validFrom ?? now
    checkWindow(validFrom, r.validTo)
    const key = predicateKey(r.predicate)
    const chain = (await rowsOfSubject(ctx, subject.id)).filter((row) => row.deletedAt === undefined && predicateKey(row.predicate) === key)
    // Already known: the same object true at validFrom (or stated from the same time), and no new end.
    const known = chain.find((row) => sameObject(row, r, object) && (holdsAt(row, validFrom) || row.validFrom === validFrom))
    if (known && r.validTo === undefined) return { row: known }
    const row: RelationRow = {
      id: newId(now),
      projectId,
      subjectId: subject.id,
      predicate: r.predicate,
      validFrom,
      confidence: r.confidence,
      createdAt: now,
      updatedAt: now,
      hlc: w.hlc(),
    }
    if (object !== undefined) row.objectId = object
    else row.value = r.value!
    if (r.validTo !== undefined) row.statedTo = r.validTo
    if (r.provenance) row.provenance = r.provenance
    await storeRelationRow(ctx, w, row)
    return { row, subject: cardinalityOf(ctx, r.predicate) === 'one' ? subject.id : undefined }
  }

  async function addAll(projectId: string, inputs: CheckedRelation[]): Promise<Relation[]> {
    return write(ctx, tables(), async (w) => {
      await requireProject(ctx, projectId)
      const entities = new Map<string, EntityRow>()
      const rows: RelationRow[] = []
      const rederive = new Map<string, Set<string>>()
      for (const input of inputs) {
        const { row, subject } = await addOne(w, projectId, input, entities)
        rows.push(row)
        if (subject !== undefined) {
          let keys = rederive.get(subject)
          if (!keys) rederive.set(subject, (keys = new Set()))
          keys.add(predicateKey(row.predicate))
        }
      }
      for (const [subject, keys] of rederive) await rederiveSubject(ctx, w, subject, keys)
      // Read back: the derived windows of the new rows.
      const stored = await relationTable(ctx).bulkGet(rows.map((r) => r.id))
      return stored.map((row, i) => toRelation(row ?? rows[i]!))
    })
  }

  async function entityAt(projectId: string, entityId: string): Promise<EntityRow> {
    const row = await entityTable(ctx).get(entityId)
    if (!row || row.projectId !== projectId) throw new MemoryError('not_found', `No entity ${JSON.stringify(entityId)} in project ${JSON.stringify(projectId)}`)
    const canonical = await canonicalEntity(ctx, row)
    if (!canonical || canonical.deletedAt !== undefined) throw new MemoryError('not_found', `Entity ${JSON.stringify(entityId)} was deleted`)
    return canonical
  }

  async function holdingFor(projectId: string, entityId: string, t: number, options: RelationQueryOptions | undefined): Promise<Relation[]> {
    checkId('projectId', projectId)
    checkId('entityId', entityId)
    const o = checkOptions('options', options, ['predicate', 'direction'])
    const key = o.predicate === undefined ? undefined : predicateKey(checkPredicate('options.predicate', o.predicate))
    const direction = o.direction === undefined ? 'both' : checkOneOf('options.direction', o.direction, ['out', 'in', 'both'] as const)
    const rows = await read(ctx, readTables, async () => {
      // The common case in one round trip: the entity, whether anything was merged into it, and its relations, read at once.
      const [row, merged, rows] = await Promise.all([
        entityTable(ctx).get(entityId),
        entityTable(ctx).where('mergedInto').equals(entityId).primaryKeys(),
        relationsOf(ctx, [entityId], direction),
      ])
      if (row && row.projectId === projectId && row.deletedAt === undefined && row.mergedInto === undefined && merged.length === 0) return rows
      const entity = await entityAt(projectId, entityId)
      return relationsOf(ctx, await mergedIds(ctx, entity.id), direction)
    })
    return holdingAt(key === undefined ? rows : rows.filter((r) => predicateKey(r.predicate) === key), t).map(toRelation)
  }

  return {
    async add(projectId, input) {
      checkId('projectId', projectId)
      return (await addAll(projectId, [checkRelationInput('relation', input)]))[0]!
    },

    async addMany(projectId, inputs) {
      checkId('projectId', projectId)
      if (!Array.isArray(inputs)) throw invalidInput(`relations must be an array, got ${describe(inputs)}`)
      if (inputs.length > MAX_RELATIONS_PER_CALL) throw new MemoryError('limit_exceeded', `addMany takes at most ${MAX_RELATIONS_PER_CALL} relations`)
      if (inputs.length === 0) return []
      return addAll(
        projectId,
        inputs.map((input, i) => checkRelationInput(`relations[${i}]`, input)),
      )
    },

    async get(projectId, id) {
      checkId('projectId', projectId)
      checkId('id', id)
      const row = await read(ctx, ['relations'], () => relationTable(ctx).get(id))
      return row && row.projectId === projectId && row.deletedAt === undefined ? toRelation(row) : undefined
    },

    async end(projectId, id, at, options) {
      checkId('projectId', projectId)
      checkId('id', id)
      const t = at === undefined ? undefined : checkTime('at', at)
      const provenance = checkProvenance('options.provenance', checkOptions('options', options, ['provenance']).provenance)
      return write(ctx, tables(), async (w) => {
        const row = await relationTable(ctx).get(id)
        if (!row || row.projectId !== projectId || row.deletedAt !== undefined)
          throw new MemoryError('not_found', `No relation ${JSON.stringify(id)} in project ${JSON.stringify(projectId)}`)
        const end = t ?? ctx.now()
        checkWindow(row.validFrom, end)
        if (row.statedTo === end) return toRelation(row)
        const next: RelationRow = { ...row, statedTo: end, updatedAt: ctx.now(), hlc: w.hlc(row.hlc) }
        const joined = joinProvenance(row.provenance, provenance)
        if (joined) next.provenance = joined
        await storeRelationRow(ctx, w, next)
        return toRelation(next)
      })
    },

    async delete(projectId, id) {
      checkId('projectId', projectId)
      checkId('id', id)
      return write(ctx, tables(), async (w) => {
        const row = await relationTable(ctx).get(id)
        if (!row || row.projectId !== projectId || row.deletedAt !== undefined) return false
        await deleteRelationRow(ctx, w, row)
        return true
      })
    },

    current(projectId, entityId, options) {
      return holdingFor(projectId, entityId, ctx.now(), options)
    },

    asOf(projectId, entityId, time, options) {
      return holdingFor(projectId, entityId, checkTime('time', time), options)
    },

    async history(projectId, entityId, predicate) {
      checkId('projectId', projectId)
      checkId('entityId', entityId)
      const key = predicateKey(checkPredicate('predicate', predicate))
      const rows = await read(ctx, readTables, async () => rowsOfSubject(ctx, (await entityAt(projectId, entityId)).id))
      return rows
        .filter((r) => r.deletedAt === undefined && predicateKey(r.predicate) === key)
        .sort(chainOrder)
        .map(toRelation)
    },

    async around(projectId, entityId, options) {
      checkId('projectId', projectId)
      checkId('entityId', entityId)
      const o = checkOptions('options', options, ['depth', 'limit', 'asOf'])
      const depth = o.depth === undefined ? 1 : checkNumber('options.depth', o.depth, { min: 1, max: MAX_AROUND_DEPTH, integer: true })
      const limit = checkLimit('options.limit', o.limit, 100, 1_000)
      const t = o.asOf === undefined ? ctx.now() : checkTime('options.asOf', o.asOf)
      const found = await read(ctx, readTables, async () => walkAround(ctx, await entityAt(projectId, entityId), t, depth, limit))
      return { entities: found.entities.map(toEntity), relations: found.relations.sort(readingOrder).map(toRelation) }
    },

    async list(projectId, options) {
      checkId('projectId', projectId)
      const o = checkOptions('options', options, ['at', 'current', 'limit'])
      if (o.current !== undefined && typeof o.current !== 'boolean') throw invalidInput(`options.current must be a boolean, got ${describe(o.current)}`)
      if (o.current && o.at !== undefined) throw invalidInput('options.at and options.current exclude each other')
      const at = o.current ? ctx.now() : o.at === undefined ? undefined : checkTime('options.at', o.at)
      const limit = checkLimit('options.limit', o.limit, 1_000, 100_000)
      const rows = await read(ctx, ['relations'], () => relationTable(ctx).where('projectId').equals(projectId).toArray())
      return rows
        .filter((r) => r.deletedAt === undefined && (at === undefined || holdsAt(r, at)))
        .sort(chainOrder)
        .slice(0, limit)
        .map(toRelation)
    },

    async cardinality(predicate) {
      return cardinalityOf(ctx, checkPredicate('predicate', predicate))
    },
  }
}

/** Deletes a relation inside a write (a tombstone) and derives its chain again. */
export async function deleteRelationRow(ctx: StoreContext, w: WriteScope, row: RelationRow): Promise<void> {
  const now = ctx.now()
  const tomb: RelationRow = { ...row, deletedAt: now, updatedAt: now, hlc: w.hlc(row.hlc) }
  delete tomb.closedAt
  delete tomb.closedBy
  await storeRelationRow(ctx, w, tomb)
  if (cardinalityOf(ctx, row.predicate) === 'one') await rederiveSubject(ctx, w, await canonicalId(ctx, row.subjectId), new Set([predicateKey(row.predicate)]))
}
