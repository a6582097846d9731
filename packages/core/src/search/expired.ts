import type { StoreContext } from '../store/store-context.js'
import { read } from '../store/write.js'
import type { Hit, HitKind } from './types.js'

/** The kinds whose records carry an `expiresAt`, by the table they are stored in. */
const EXPIRING: Partial<Record<HitKind, 'facts' | 'passages' | 'observations'>> = { fact: 'facts', passage: 'passages', observation: 'observations' }

/** Ids of the facts, passages and observations whose `expiresAt` passed at `now` and that the sweep has not purged yet. */
export async function expiredIds(ctx: StoreContext, now: number): Promise<{ facts: Set<string>; passages: Set<string>; observations: Set<string> }> {
  return read(ctx, ['facts', 'passages', 'observations'], async () => {
    const [facts, passages, observations] = await Promise.all([
      ctx.db.facts.where('expiresAt').belowOrEqual(now).toArray(),
      ctx.db.passages.where('expiresAt').belowOrEqual(now).primaryKeys(),
      ctx.db.table<{ id: string }, string>('observations').where('expiresAt').belowOrEqual(now).primaryKeys(),
    ])
    return { facts: new Set(facts.map((f) => f.id)), passages: new Set(passages), observations: new Set(observations) }
  })
}

/** The hits without expired facts, passages and observations: expired memory leaves search at once, before the sweep purges it. */
export async function withoutExpired(ctx: StoreContext, hits: Hit[]): Promise<Hit[]> {
  if (!hits.some((h) => EXPIRING[h.kind] !== undefined)) return hits
  const expired = await expiredIds(ctx, ctx.now())
  if (expired.facts.size === 0 && expired.passages.size === 0 && expired.observations.size === 0) return hits
  return hits.filter((h) => {
    const table = EXPIRING[h.kind]
    return table === undefined || !expired[table].has(h.id)
  })
}
