import type { Memory } from '../compose/memory.js'
import type { Entity } from '../entities/entities.js'
import type { Relation } from '../relations/relations.js'
import { USER_PROJECT } from '../store/store-context.js'
import type { Tokenizer } from '../store/token-estimate.js'
import { escapeMemoryText } from './escape.js'
import type { DraftItem } from './fit-budget.js'

/** What the knowledge section is made of: the entities the query names, each with its relations at the build's time. */
export interface KnowledgeGathered {
  /** The time the relations hold at: the build's `asOf`, or now. */
  at: number
  /** Whether the build asked for another time than now. */
  asOf: boolean
  /** Mentioned entities, first named first, each with its neighbours' names and its relations. */
  mentioned: { entity: Entity; names: ReadonlyMap<string, string>; relations: Relation[] }[]
}

/** Entities of a query a context shows the relations of. */
const MAX_MENTIONED = 5
/** Relations per mentioned entity a context considers. */
const MAX_RELATIONS = 30

/**
 * Gathers the knowledge section: the entities the query names (the project's and the user's,
 * through aliases and merges) and the relations of each true at `at`. A store without the
 * knowledge module, or a build without a query, has none.
 */
export async function gatherKnowledge(
  memory: Partial<Memory>,
  projectId: string,
  query: string | undefined,
  at: number,
  asOf: boolean,
): Promise<KnowledgeGathered> {
  const empty: KnowledgeGathered = { at, asOf, mentioned: [] }
  const { entities, relations } = memory
  if (!entities || !relations || query === undefined || query.trim() === '') return empty
  const projects = projectId === USER_PROJECT ? [projectId] : [USER_PROJECT, projectId]
  const named = (await Promise.all(projects.map((p) => entities.mentioned(p, query, { limit: MAX_MENTIONED })))).flat().slice(0, MAX_MENTIONED)
  const mentioned = await Promise.all(
    named.map(async (entity) => {
      const graph = await relations.around(entity.projectId, entity.id, { depth: 1, limit: MAX_RELATIONS, asOf: at })
      return { entity, names: new Map(graph.entities.map((e) => [e.id, e.name])), relations: graph.relations }
    }),
  )
  return { at, asOf, mentioned }
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** A relation's validity as a context shows it: since when, and until when where it ended. */
export function validityText(r: Pick<Relation, 'validFrom' | 'validTo'>): string {
  return r.validTo === undefined ? `since ${day(r.validFrom)}` : `${day(r.validFrom)} to ${day(r.validTo)}`
}

/**
 * The lines of the knowledge section, most wanted first: per mentioned entity (in the order
 * the query names them) its relations true at the build's time, newest first, each with its
 * validity. Shown grouped by entity.
 */
export function knowledgeItems(g: KnowledgeGathered, clamp: (line: string) => string, tokenizer: Tokenizer): DraftItem[] {
  const items: DraftItem[] = []
  const seen = new Set<string>()
  let order = 0
  for (const { entity, names, relations } of g.mentioned) {
    const nameOf = (id: string | undefined) => (id === undefined ? undefined : (names.get(id) ?? id))
    for (const r of [...relations].sort((a, b) => b.validFrom - a.validFrom || (a.id < b.id ? -1 : 1))) {
      if (seen.has(r.id)) continue
      seen.add(r.id)
      const object = r.object === undefined ? JSON.stringify(r.value) : nameOf(r.object)!
      const who = r.subject === entity.id ? entity.name : nameOf(r.subject)!
      const line = clamp(`- ${escapeMemoryText(who)} ${escapeMemoryText(r.predicate)} ${escapeMemoryText(object)} (${validityText(r)})`)
      items.push({ line, tokens: tokenizer.count(line), order: order++ })
    }
  }
  // An as-of build says which time it shows, above its lines (kept while any line is).
  if (g.asOf && items.length > 0) {
    const line = `- (as of ${day(g.at)})`
    items.splice(0, 0, { line, tokens: tokenizer.count(line), order: -1 })
  }
  return items
}
