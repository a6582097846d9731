import { CHANGE_KINDS } from '../catalog/lists.js'
import type { Change, ChangeFilter } from '../store/change-feed.js'
import { MemoryError } from '../store/errors.js'
import type { Unsubscribe } from '../store/status.js'
import type { StoreContext } from '../store/store-context.js'
import { checkId, checkOneOf, checkOptions } from '../store/validate.js'

/** `memory.changes.subscribe`: checks the filter, then subscribes to the store's feed. */
export async function subscribeChanges(ctx: StoreContext, filter: ChangeFilter, listener: (batch: Change[]) => void): Promise<Unsubscribe> {
  ctx.assertOpen()
  const f = checkOptions('filter', filter, ['projectId', 'kinds'])
  if (typeof listener !== 'function') throw new MemoryError('invalid_input', 'changes.subscribe needs a listener function')
  if (f.projectId !== undefined) checkId('filter.projectId', f.projectId)
  if (f.kinds !== undefined && !Array.isArray(f.kinds)) throw new MemoryError('invalid_input', 'filter.kinds must be an array')
  for (const kind of f.kinds ?? []) checkOneOf('filter.kinds[]', kind, CHANGE_KINDS)
  const off = ctx.feed.subscribe(f, listener)
  return async () => off()
}
