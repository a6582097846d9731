import type { StoreContext } from '../store/store-context.js'
import { checkId } from '../store/validate.js'
import { read, write } from '../store/write.js'
import { mirrorPersonLink, personLinkTables } from './person-entities.js'
import { linkPerson, MAX_CHAIN, type PersonRow, resolvePerson, table } from './person-links.js'

export { linkPerson, resolvePerson, type PersonRow }

/**
 * One person, several identities: aliases resolve to one canonical id. Every id linked is also a
 * person entity of the user project (`memory.entities`, type `person`, named by the id), merged
 * as the ids are linked; merging two person entities of the user project links their ids.
 */
export interface PeopleApi {
  /** The canonical id of `id` (itself when it is no one's alias). @throws MemoryError `invalid_input`. */
  resolve(id: string): Promise<string>
  /**
   * Makes `aliasId` an alias of `canonicalId` (of its canonical id, when it is an alias itself);
   * aliases of `aliasId` follow it. A welcome of either side carries over.
   * @example await memory.people.link('email:ada@example.com', 'user:42')
   * @throws MemoryError `invalid_input` for a bad id, a self-link, or a link that would make a cycle.
   */
  link(aliasId: string, canonicalId: string): Promise<void>
  /** Every id that resolves to `canonicalId` (not itself), sorted. @throws MemoryError `invalid_input`. */
  aliases(canonicalId: string): Promise<string[]>
  /** Whether the person `id` resolves to was never welcomed. @throws MemoryError `invalid_input`. */
  isNew(id: string): Promise<boolean>
  /** Marks the person `id` resolves to as welcomed (idempotent). @throws MemoryError `invalid_input`. */
  markWelcomed(id: string): Promise<void>
}

const TABLES = ['people']

/** Creates the people namespace of a store. */
export function createPeople(ctx: StoreContext): PeopleApi {
  const people = () => table(ctx)
  return {
    async resolve(id) {
      checkId('id', id)
      return read(ctx, TABLES, () => resolvePerson(ctx, id))
    },
    async link(aliasId, canonicalId) {
      checkId('aliasId', aliasId)
      checkId('canonicalId', canonicalId)
      await write(ctx, personLinkTables(ctx), async (w) => {
        await linkPerson(ctx, (id) => w.change('people', 'put', id, ''), aliasId, canonicalId)
        await mirrorPersonLink(ctx, aliasId, await resolvePerson(ctx, canonicalId))
      })
    },
    async aliases(canonicalId) {
      checkId('canonicalId', canonicalId)
      return read(ctx, TABLES, async () => {
        const found = new Set<string>()
        let frontier = [canonicalId]
        // Links point at canonical ids, but an id relinked later keeps its own aliases: walk every level.
        for (let depth = 0; frontier.length > 0 && depth < MAX_CHAIN; depth++) {
          const rows = await people().where('canonicalId').anyOf(frontier).toArray()
          frontier = rows.map((r) => r.id).filter((id) => !found.has(id) && id !== canonicalId)
          for (const id of frontier) found.add(id)
        }
        return [...found].sort()
      })
    },
    async isNew(id) {
      checkId('id', id)
      return read(ctx, TABLES, async () => (await people().get(await resolvePerson(ctx, id)))?.welcomedAt === undefined)
    },
    async markWelcomed(id) {
      checkId('id', id)
      await write(ctx, TABLES, async (w) => {
        const root = await resolvePerson(ctx, id)
        const row = await people().get(root)
        if (row?.welcomedAt !== undefined) return
        const now = ctx.now()
        await people().put({ ...(row ?? { id: root, createdAt: now }), welcomedAt: now, updatedAt: now })
        w.change('people', 'put', root, '')
      })
    },
  }
}
