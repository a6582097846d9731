import { createEntities } from '../entities/entities.js'
import { nameKey } from '../entities/entity-rows.js'
import { createEntityGraphEdits } from '../relations/entity-graph-edits.js'
import { relationTables } from '../relations/relation-store.js'
import { USER_PROJECT, type StoreContext } from '../store/store-context.js'

/** The type of the entities people are. */
export const PERSON_TYPE = 'person'

/** Tables a people link writes: its own, and the person entities it keeps in step. */
export function personLinkTables(ctx: StoreContext): string[] {
  return ['people', ...relationTables(ctx)]
}

/**
 * Keeps the person entities of the user project in step with a people link, inside the
 * caller's write over {@link personLinkTables}: each id is a person entity named by it, and the
 * alias's entity is merged into the canonical one (its relations and observations move there).
 * Ids without letters or digits name no entity.
 */
export async function mirrorPersonLink(ctx: StoreContext, aliasId: string, rootId: string): Promise<void> {
  if (nameKey(aliasId) === '' || nameKey(rootId) === '') return
  const entities = createEntities(ctx)
  const alias = await entities.upsert(USER_PROJECT, { name: aliasId, type: PERSON_TYPE })
  const root = await entities.upsert(USER_PROJECT, { name: rootId, type: PERSON_TYPE })
  if (alias.id !== root.id) await createEntityGraphEdits(ctx).merge(USER_PROJECT, alias.id, root.id)
}
