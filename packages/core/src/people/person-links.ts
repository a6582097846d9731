import { invalidInput } from '../store/errors.js'
import type { StoreContext } from '../store/store-context.js'

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

/** Longest alias chain followed: links point at canonical ids, so chains stay short; this bounds a corrupt one. */
export const MAX_CHAIN = 64

/** The table of people rows. */
export const table = (ctx: StoreContext) => ctx.db.table<PersonRow, string>('people')

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
