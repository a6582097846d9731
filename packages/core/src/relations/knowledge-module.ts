import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { type MemoryModule, storeOf } from '../store/module.js'
import { type Cardinality, checkPredicates, PREDICATES_META_KEY, registerPredicates } from './predicate-options.js'

/** Options of {@link knowledgeModule}. */
export interface KnowledgeModuleOptions {
  /**
   * The cardinality of the app's own predicates (and overrides of the built-in ones, such as
   * `works_at: 'one'`). Every device of an app must declare the same: the windows derive from them.
   */
  predicates?: Record<string, Cardinality>
}

/** The entities methods. */
export const ENTITY_METHODS = [
  'upsert',
  'get',
  'resolve',
  'mentioned',
  'list',
  'addAliases',
  'addObservations',
  'removeObservations',
  'merge',
  'delete',
] as const
/** The relations methods. */
export const RELATION_METHODS = ['add', 'addMany', 'get', 'end', 'delete', 'current', 'asOf', 'history', 'around', 'list', 'cardinality'] as const

/**
 * Time-aware knowledge: `memory.entities` (named things with aliases and observations) and
 * `memory.relations` (subject — predicate — object with validity windows). Both sync between
 * devices like facts; their code loads on first call.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [knowledgeModule({ predicates: { mentors: 'many' } })] })
 * @throws MemoryError `invalid_input` for a bad predicate declaration.
 */
export function knowledgeModule(options: KnowledgeModuleOptions = {}): MemoryModule<'entities' | 'relations'> {
  const predicates = checkPredicates(options.predicates)
  return {
    name: 'knowledge',
    tables: ['entities', 'relations'],
    install(c) {
      registerPredicates(storeOf(c), predicates)
    },
    async open(c) {
      const ctx = storeOf(c)
      // Only a store whose declarations changed loads the code that derives its windows again.
      const stored = (await ctx.db.meta.get(PREDICATES_META_KEY))?.value ?? ''
      if (stored !== predicates.signature) await (await import('./predicate-signature.js')).rederiveOnNewPredicates(ctx, predicates)
    },
    create(c) {
      const ctx = storeOf(c)
      const entities = loadOnUse('entities', async () => {
        const [{ createEntities }, { createEntityGraphEdits }] = await Promise.all([import('../entities/entities.js'), import('./entity-graph-edits.js')])
        return { ...createEntities(ctx), ...createEntityGraphEdits(ctx) }
      })
      const relations = loadOnUse('relations', async () => (await import('./relations.js')).createRelations(ctx))
      return { entities: methodsOnUse(entities, ENTITY_METHODS), relations: methodsOnUse(relations, RELATION_METHODS) }
    },
  }
}
