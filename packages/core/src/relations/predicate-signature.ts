import type { StoreContext } from '../store/store-context.js'
import { write } from '../store/write.js'
import { canonicalId } from '../entities/entity-resolve.js'
import { PREDICATES_META_KEY, type Predicates } from './predicates.js'
import { relationTable } from './relation-rows.js'
import { rederiveSubject } from './relation-store.js'

/**
 * Derives every stored window again when the app's predicate declarations changed since the
 * last open (a predicate that became single-valued closes its older assertions; one that
 * became multi-valued reopens them), in one transaction, then records the declarations.
 */
export async function rederiveOnNewPredicates(ctx: StoreContext, predicates: Predicates): Promise<void> {
  const stored = (await ctx.db.meta.get(PREDICATES_META_KEY))?.value ?? ''
  if (stored === predicates.signature) return
  await write(ctx, ['entities', 'relations', 'meta'], async (w) => {
    const subjects = new Set<string>()
    await relationTable(ctx).each((row) => void subjects.add(row.subjectId))
    const canonical = new Set<string>()
    for (const s of subjects) canonical.add(await canonicalId(ctx, s))
    for (const s of canonical) await rederiveSubject(ctx, w, s)
    await ctx.db.meta.put({ key: PREDICATES_META_KEY, value: predicates.signature })
  })
}
