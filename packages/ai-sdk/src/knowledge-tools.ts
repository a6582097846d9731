import { type Entity as EngramEntity, type Memory, MemoryError, type Relation as EngramRelation } from '@engram/core'
import { tool } from 'ai'
import { z } from 'zod'

/** What {@link knowledgeTools} needs of a memory: its entities and relations (`knowledgeModule`). */
export type KnowledgeMemory = Pick<Memory, 'entities' | 'relations'>

/** Options of {@link knowledgeTools}. */
export interface KnowledgeToolsOptions {
  /** The project the tools read and write. */
  projectId: string
}

/** An entity as the MCP reference memory server shows it. */
export interface GraphEntity {
  name: string
  entityType: string
  observations: string[]
}
/** A relation as the MCP reference memory server shows it (entity names, not ids). */
export interface GraphRelation {
  from: string
  to: string
  relationType: string
}
/** A knowledge graph as the MCP reference memory server shows it. */
export interface KnowledgeGraph {
  entities: GraphEntity[]
  relations: GraphRelation[]
}

const EntitySchema = z.object({
  name: z.string().describe('The name of the entity'),
  entityType: z.string().describe('The type of the entity'),
  observations: z.array(z.string()).describe('An array of observation contents associated with the entity'),
})
const RelationSchema = z.object({
  from: z.string().describe('The name of the entity where the relation starts'),
  to: z.string().describe('The name of the entity where the relation ends'),
  relationType: z.string().describe('The type of the relation'),
})
const GraphSchema = z.object({ entities: z.array(EntitySchema), relations: z.array(RelationSchema) })
const DoneSchema = z.object({ success: z.boolean(), message: z.string() })
/** Longest `search_nodes` query, as the reference server. */
export const SEARCH_QUERY_MAX_LENGTH = 2048
/** Most entities `read_graph` and `search_nodes` read. */
const MAX_GRAPH_ENTITIES = 10_000

const fold = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()

/**
 * AI SDK tools with exactly the names, inputs and outputs of the MCP reference memory server
 * (modelcontextprotocol/servers, `src/memory`): `create_entities`, `create_relations`,
 * `add_observations`, `delete_entities`, `delete_observations`, `delete_relations`,
 * `read_graph`, `search_nodes`, `open_nodes` — so agents and prompts written for that server
 * work unchanged, on Engram's entities and relations in one project. A relation is created true
 * from now; under a single-valued predicate (`works_at`, …) it closes the one it replaces, which
 * stays in `memory.relations.history`; every other relation type accumulates. The graph the
 * tools read is what is true now. Where the server fails a call (an entity that does not
 * exist), the tool throws, and the AI SDK hands the model the error as the tool's result.
 *
 * @throws MemoryError `invalid_input` for a missing `projectId` or a memory without entities and relations.
 * @example
 * const { text } = await generateText({ model, tools: knowledgeTools(memory, { projectId }), stopWhen: stepCountIs(5), prompt })
 */
export function knowledgeTools(memory: KnowledgeMemory, options: KnowledgeToolsOptions) {
  const projectId = checkKnowledgeOptions(memory, options)
  const { entities, relations } = memory
  const byName = async (name: string): Promise<EngramEntity> => {
    const found = await entities.resolve(projectId, name)
    if (!found) throw new MemoryError('not_found', `Entity with name ${name} not found`)
    return found
  }
  /** The current relations touching a set of entities, in the server's shape. */
  const relationsOf = async (ids: readonly string[], names: Map<string, string>): Promise<GraphRelation[]> => {
    const seen = new Set<string>()
    const out: GraphRelation[] = []
    for (const id of ids) {
      for (const r of await relations.current(projectId, id)) {
        if (seen.has(r.id)) continue
        seen.add(r.id)
        out.push(await toGraphRelation(r, names))
      }
    }
    return out
  }
  const toGraphRelation = async (r: EngramRelation, names: Map<string, string>): Promise<GraphRelation> => {
    const nameOf = async (id: string) => {
      let name = names.get(id)
      if (name === undefined) names.set(id, (name = (await entities.get(projectId, id))?.name ?? id))
      return name
    }
    return { from: await nameOf(r.subject), to: r.object === undefined ? String(r.value) : await nameOf(r.object), relationType: r.predicate }
  }
  const toGraphEntity = (e: EngramEntity): GraphEntity => ({ name: e.name, entityType: e.type, observations: [...e.observations] })
  const graphOf = async (found: readonly EngramEntity[]): Promise<KnowledgeGraph> => {
    const names = new Map(found.map((e) => [e.id, e.name]))
    return {
      entities: found.map(toGraphEntity),
      relations: await relationsOf(
        found.map((e) => e.id),
        names,
      ),
    }
  }

  return {
    create_entities: tool({
      description: 'Create multiple new entities in the knowledge graph',
      inputSchema: z.object({ entities: z.array(EntitySchema) }),
      outputSchema: z.object({ entities: z.array(EntitySchema) }),
      execute: async (input) => {
        const created: GraphEntity[] = []
        for (const e of input.entities) {
          if (created.some((c) => fold(c.name) === fold(e.name)) || (await entities.resolve(projectId, e.name))) continue
          await entities.upsert(projectId, { name: e.name, type: e.entityType, observations: e.observations })
          created.push({ name: e.name, entityType: e.entityType, observations: [...new Set(e.observations)] })
        }
        return { entities: created }
      },
    }),
    create_relations: tool({
      description: 'Create multiple new relations between entities in the knowledge graph. Relations should be in active voice',
      inputSchema: z.object({ relations: z.array(RelationSchema) }),
      outputSchema: z.object({ relations: z.array(RelationSchema) }),
      execute: async (input) => {
        const ends = await Promise.all(input.relations.map(async (r) => [await byName(r.from), await byName(r.to)] as const))
        const created: GraphRelation[] = []
        for (const [i, r] of input.relations.entries()) {
          const [from, to] = ends[i]!
          const current = await relations.current(projectId, from.id, { predicate: r.relationType, direction: 'out' })
          if (current.some((c) => c.object === to.id) || created.some((c) => c.from === r.from && c.to === r.to && c.relationType === r.relationType)) continue
          await relations.add(projectId, { subject: from.id, predicate: r.relationType, object: to.id, provenance: { source: 'create_relations' } })
          created.push({ from: r.from, to: r.to, relationType: r.relationType })
        }
        return { relations: created }
      },
    }),
    add_observations: tool({
      description: 'Add new observations to existing entities in the knowledge graph',
      inputSchema: z.object({
        observations: z.array(
          z.object({
            entityName: z.string().describe('The name of the entity to add the observations to'),
            contents: z.array(z.string()).describe('An array of observation contents to add'),
          }),
        ),
      }),
      outputSchema: z.object({ results: z.array(z.object({ entityName: z.string(), addedObservations: z.array(z.string()) })) }),
      execute: async (input) => {
        const found = await Promise.all(input.observations.map((o) => byName(o.entityName)))
        const results: { entityName: string; addedObservations: string[] }[] = []
        for (const [i, o] of input.observations.entries())
          results.push({ entityName: o.entityName, addedObservations: await entities.addObservations(projectId, found[i]!.id, o.contents) })
        return { results }
      },
    }),
    delete_entities: tool({
      description: 'Delete multiple entities and their associated relations from the knowledge graph',
      inputSchema: z.object({ entityNames: z.array(z.string()).describe('An array of entity names to delete') }),
      outputSchema: DoneSchema,
      execute: async ({ entityNames }) => {
        const notFound: string[] = []
        for (const name of entityNames) {
          const found = await entities.resolve(projectId, name)
          if (!found || !(await entities.delete(projectId, found.id))) notFound.push(name)
        }
        const deleted = entityNames.length - notFound.length
        const message =
          notFound.length === 0 ? 'Entities deleted successfully' : `Deleted ${deleted} of ${entityNames.length} entities. Not found: ${notFound.join(', ')}`
        return { success: true, message }
      },
    }),
    delete_observations: tool({
      description: 'Delete specific observations from entities in the knowledge graph',
      inputSchema: z.object({
        deletions: z.array(
          z.object({
            entityName: z.string().describe('The name of the entity containing the observations'),
            observations: z.array(z.string()).describe('An array of observations to delete'),
          }),
        ),
      }),
      outputSchema: DoneSchema,
      execute: async ({ deletions }) => {
        let deletedCount = 0
        const missing: string[] = []
        for (const d of deletions) {
          const found = await entities.resolve(projectId, d.entityName)
          if (!found) missing.push(d.entityName)
          else deletedCount += (await entities.removeObservations(projectId, found.id, d.observations)).length
        }
        const requested = deletions.reduce((n, d) => n + d.observations.length, 0)
        const message =
          deletedCount === requested
            ? 'Observations deleted successfully'
            : `Deleted ${deletedCount} of ${requested} observations.${missing.length ? ` Entities not found: ${missing.join(', ')}` : ''}`
        return { success: true, message }
      },
    }),
    delete_relations: tool({
      description: 'Delete multiple relations from the knowledge graph',
      inputSchema: z.object({ relations: z.array(RelationSchema).describe('An array of relations to delete') }),
      outputSchema: DoneSchema,
      execute: async (input) => {
        let deletedCount = 0
        for (const r of input.relations) {
          const [from, to] = await Promise.all([entities.resolve(projectId, r.from), entities.resolve(projectId, r.to)])
          if (!from || !to) continue
          for (const c of await relations.current(projectId, from.id, { predicate: r.relationType, direction: 'out' }))
            if (c.object === to.id && (await relations.delete(projectId, c.id))) deletedCount++
        }
        const message =
          deletedCount === input.relations.length
            ? 'Relations deleted successfully'
            : `Deleted ${deletedCount} of ${input.relations.length} relations. The rest matched nothing.`
        return { success: true, message }
      },
    }),
    read_graph: tool({
      description: 'Read the entire knowledge graph',
      inputSchema: z.object({}),
      outputSchema: GraphSchema,
      execute: async () => {
        const all = await entities.list(projectId, { limit: MAX_GRAPH_ENTITIES })
        const names = new Map(all.map((e) => [e.id, e.name]))
        const current = await relations.list(projectId, { current: true, limit: 100_000 })
        return { entities: all.map(toGraphEntity), relations: await Promise.all(current.map((r) => toGraphRelation(r, names))) }
      },
    }),
    search_nodes: tool({
      description: 'Search for nodes in the knowledge graph based on a query',
      inputSchema: z.object({
        query: z.string().max(SEARCH_QUERY_MAX_LENGTH).describe('The search query to match against entity names, types, and observation content'),
      }),
      outputSchema: GraphSchema,
      execute: async ({ query }) => {
        const q = fold(query)
        const all = await entities.list(projectId, { limit: MAX_GRAPH_ENTITIES })
        return graphOf(all.filter((e) => [e.name, e.type, ...e.aliases, ...e.observations].some((text) => fold(text).includes(q))))
      },
    }),
    open_nodes: tool({
      description: 'Open specific nodes in the knowledge graph by their names',
      inputSchema: z.object({ names: z.array(z.string()).describe('An array of entity names to retrieve') }),
      outputSchema: GraphSchema,
      execute: async ({ names }) => {
        const found: EngramEntity[] = []
        for (const name of names) {
          const e = await entities.resolve(projectId, name)
          if (e && !found.some((f) => f.id === e.id)) found.push(e)
        }
        return graphOf(found)
      },
    }),
  }
}

function checkKnowledgeOptions(memory: KnowledgeMemory, options: KnowledgeToolsOptions): string {
  for (const ns of ['entities', 'relations'] as const) {
    if (typeof memory?.[ns] !== 'object' || memory[ns] === null)
      throw new MemoryError('invalid_input', `knowledgeTools needs a memory with ${ns} (openMemory, or createMemory with knowledgeModule())`)
  }
  if (typeof options !== 'object' || options === null) throw new MemoryError('invalid_input', 'knowledgeTools options must be { projectId }')
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && key !== 'projectId') throw new MemoryError('invalid_input', `knowledgeTools does not know the option "${key}"`)
  }
  const { projectId } = options
  if (typeof projectId !== 'string' || projectId === '' || projectId.trim() !== projectId)
    throw new MemoryError('invalid_input', 'knowledgeTools projectId must be a non-empty string')
  return projectId
}
