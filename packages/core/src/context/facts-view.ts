import type { Fact } from '../facts/facts.js'
import { foreignWritesOf, startForeignWrites } from '../search/cache/foreign-writes.js'
import type { StoreContext } from '../store/store-context.js'

/*
 * The facts `context.build` puts in a prompt: every live fact of the project and of the user,
 * read whole on every build. A project that gathered thousands of facts pays most of a build
 * for reading and decoding them again, though they rarely change between two turns. So the
 * facts of the projects built for recently stay in memory until a write changes them.
 */

/** Projects whose facts the view holds at most (least recently used first out). */
export const VIEW_PROJECTS = 16

/** The live facts of recently built projects, kept current by the store's writes. */
export interface FactsView {
  /** The project's live facts (expired ones included: the caller filters by its own time), from memory when held. */
  facts(projectId: string): Promise<readonly Fact[]>
}

const views = new WeakMap<StoreContext, FactsView>()

/**
 * The facts view of a store, created on first use: `read` lists a project's live facts. A
 * committed change of a fact or a project (local, or remote through sync) drops that project,
 * and so does another connection's write notice (search/cache/foreign-writes.ts); a read that
 * a change overtook is returned but not kept.
 */
export function factsViewOf(ctx: StoreContext, read: (projectId: string) => Promise<readonly Fact[]>): FactsView {
  const known = views.get(ctx)
  if (known) return known
  const held = new Map<string, readonly Fact[]>()
  /** Per project, bumped by each change: a read that started before one is not kept. */
  const changed = new Map<string, number>()
  const drop = (projectId: string) => {
    changed.set(projectId, (changed.get(projectId) ?? 0) + 1)
    held.delete(projectId)
  }
  const stopFeed = ctx.feed.subscribe({ kinds: ['facts', 'projects'] }, (batch) => {
    for (const c of batch) drop(c.projectId)
  })
  const foreign = foreignWritesOf(ctx) ?? startForeignWrites(ctx, undefined)
  const stopForeign = foreign?.subscribe((notice) => {
    for (const projectId of Object.keys(notice.projects)) drop(projectId)
  })
  ctx.onClose.push(() => {
    stopFeed()
    stopForeign?.()
    held.clear()
  })
  const view: FactsView = {
    async facts(projectId) {
      const hit = held.get(projectId)
      if (hit) {
        held.delete(projectId)
        held.set(projectId, hit)
        return hit
      }
      const before = changed.get(projectId) ?? 0
      const facts = await read(projectId)
      if ((changed.get(projectId) ?? 0) === before) {
        held.set(projectId, facts)
        if (held.size > VIEW_PROJECTS) held.delete(held.keys().next().value!)
      }
      return facts
    },
  }
  views.set(ctx, view)
  return view
}
