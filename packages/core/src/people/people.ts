import { invalidInput } from '../store/errors.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId } from '../store/validate.js'
import { read, write } from '../store/write.js'

/**
 * A person as stored: an id the agent met them under (a channel id, an email,
 * a user id), and either the id it is an alias of (`canonicalId`) or, for a
 * canonical id, when they were welcomed.
 */
export interface PersonRow {
  id: string
  canonicalId?: string
  welcomedAt?: number
  createdAt: number
  updatedAt: number
}

/** One person, several identities: aliases resolve to one canonical id. */
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
/** Longest alias chain followed: links point at canonical ids, so chains stay short; this bounds a corrupt one. */
const MAX_CHAIN = 64

const table = (ctx: StoreContext) => ctx.db.table<PersonRow, string>('people')

/** The canonical id of `id`, inside the caller's transaction over `people`. */
export async function resolvePerson(ctx: StoreContext, id: string): Promise<string> {
  let current = id
  for (let i = 0; i < MAX_CHAIN; i++) {
    const row = await table(ctx).get(current)
    if (row?.canonicalId === undefined) return current
    current = row.canonicalId
  }
  throw invalidInput(`The alias chain of ${JSON.stringify(id)} is longer than ${MAX_CHAIN}`)
}

/** Links `aliasId` to `canonicalId` inside the caller's write over `people`. @throws MemoryError `invalid_input` (self-link, cycle). */
export async function linkPerson(ctx: StoreContext, change: (id: string) => void, aliasId: string, canonicalId: string): Promise<void> {
  const now = ctx.now()
  if (aliasId === canonicalId) throw invalidInput(`A person cannot be linked to itself (${JSON.stringify(aliasId)})`)
  const root = await resolvePerson(ctx, canonicalId)
  if (root === aliasId)
    throw invalidInput(
      `Linking ${JSON.stringify(aliasId)} to ${JSON.stringify(canonicalId)} would make a cycle: ${JSON.stringify(canonicalId)} already resolves to ${JSON.stringify(aliasId)}`,
    )
  const [alias, target] = await Promise.all([table(ctx).get(aliasId), table(ctx).get(root)])
  const welcomedAt = target?.welcomedAt ?? alias?.welcomedAt
  const nextTarget: PersonRow = { ...(target ?? { id: root, createdAt: now }), updatedAt: now }
  if (welcomedAt !== undefined) nextTarget.welcomedAt = welcomedAt
  const nextAlias: PersonRow = { ...(alias ?? { id: aliasId, createdAt: now }), canonicalId: root, updatedAt: now }
  delete nextAlias.welcomedAt
  await table(ctx).bulkPut([nextTarget, nextAlias])
  change(aliasId)
  change(root)
}

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
      await write(ctx, TABLES, (w) => linkPerson(ctx, (id) => w.change('people', 'put', id, ''), aliasId, canonicalId))
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
