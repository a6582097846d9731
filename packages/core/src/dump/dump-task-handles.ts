import { freshHandle, isHandle } from '../runtime/task-handle.js'
import type { StoreContext } from '../store/store-context.js'

type Row = Record<string, unknown>

/**
 * Imported tasks keep their handle unless it is missing (a dump of an older
 * store), malformed, or held by another task: then they get a fresh one, so
 * an import never fails on the unique handle index. Run inside the import's
 * transaction, after the scope was cleared.
 */
export async function withTaskHandles(ctx: StoreContext, rows: Row[]): Promise<Row[]> {
  const owner = new Map<string, string>()
  await ctx.db.table('tasks').each((t: Row) => {
    if (typeof t.handle === 'string') owner.set(t.handle, t.id as string)
  })
  // Rows this import overwrites give their handles up.
  const incoming = new Set(rows.map((r) => r.id as string))
  for (const [handle, id] of owner) if (incoming.has(id)) owner.delete(handle)
  const taken = new Set(owner.keys())
  return rows.map((r) => {
    if (isHandle(r.handle) && !taken.has(r.handle)) {
      taken.add(r.handle)
      return r
    }
    const handle = freshHandle(taken)
    taken.add(handle)
    return { ...r, handle }
  })
}
