import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { openTestMemory, testClock } from '../../../test/support/memory.js'
import { textResult, toolCallResult } from '../../../test/support/model-results.js'
import { knowledgeTools } from './knowledge-tools.js'

const TOOL_NAMES = [
  'add_observations',
  'create_entities',
  'create_relations',
  'delete_entities',
  'delete_observations',
  'delete_relations',
  'open_nodes',
  'read_graph',
  'search_nodes',
]

async function setup() {
  const clock = testClock(Date.UTC(2026, 2, 1))
  const memory = await openTestMemory({ now: clock.now })
  const project = await memory.projects.create({ name: 'graph' })
  const tools = knowledgeTools(memory, { projectId: project.id })
  const run = <I>(name: keyof typeof tools, input: I) =>
    (tools[name] as unknown as { execute: (input: I, options: never) => Promise<unknown> }).execute(input, {} as never)
  return { memory, clock, project, tools, run }
}

describe('knowledgeTools', () => {
  it('has exactly the MCP reference memory server’s tools, with its input and output schemas', async () => {
    const { tools } = await setup()
    expect(Object.keys(tools).sort()).toEqual(TOOL_NAMES)
    const shape = (name: keyof typeof tools, which: 'inputSchema' | 'outputSchema') =>
      Object.keys((tools[name][which] as unknown as { shape: Record<string, unknown> }).shape).sort()
    expect(shape('create_entities', 'inputSchema')).toEqual(['entities'])
    expect(shape('create_relations', 'inputSchema')).toEqual(['relations'])
    expect(shape('add_observations', 'inputSchema')).toEqual(['observations'])
    expect(shape('add_observations', 'outputSchema')).toEqual(['results'])
    expect(shape('delete_entities', 'inputSchema')).toEqual(['entityNames'])
    expect(shape('delete_observations', 'inputSchema')).toEqual(['deletions'])
    expect(shape('delete_relations', 'outputSchema')).toEqual(['message', 'success'])
    expect(shape('read_graph', 'inputSchema')).toEqual([])
    expect(shape('search_nodes', 'inputSchema')).toEqual(['query'])
    expect(shape('open_nodes', 'inputSchema')).toEqual(['names'])
    for (const name of ['read_graph', 'search_nodes', 'open_nodes'] as const) expect(shape(name, 'outputSchema')).toEqual(['entities', 'relations'])
  })

  it('behaves like the reference server, on time-aware relations: a new job closes the old one', async () => {
    const { memory, clock, project, run } = await setup()
    expect(
      await run('create_entities', {
        entities: [
          { name: 'Dana', entityType: 'person', observations: ['Climbs'] },
          { name: 'Acme', entityType: 'organisation', observations: [] },
          { name: 'Dana', entityType: 'person', observations: ['duplicate in the batch'] },
        ],
      }),
    ).toEqual({
      entities: [
        { name: 'Dana', entityType: 'person', observations: ['Climbs'] },
        { name: 'Acme', entityType: 'organisation', observations: [] },
      ],
    })
    // Existing names are ignored.
    expect(
      await run('create_entities', {
        entities: [
          { name: 'Dana', entityType: 'person', observations: [] },
          { name: 'Initech', entityType: 'organisation', observations: [] },
        ],
      }),
    ).toEqual({
      entities: [{ name: 'Initech', entityType: 'organisation', observations: [] }],
    })
    expect(await run('create_relations', { relations: [{ from: 'Dana', to: 'Acme', relationType: 'works_at' }] })).toEqual({
      relations: [{ from: 'Dana', to: 'Acme', relationType: 'works_at' }],
    })
    expect(await run('create_relations', { relations: [{ from: 'Dana', to: 'Acme', relationType: 'works_at' }] })).toEqual({ relations: [] })
    await expect(run('create_relations', { relations: [{ from: 'Dana', to: 'Nowhere', relationType: 'works_at' }] })).rejects.toThrow(
      'Entity with name Nowhere not found',
    )
    clock.advance(90 * 86_400_000)
    await run('create_relations', {
      relations: [
        { from: 'Dana', to: 'Initech', relationType: 'works_at' },
        { from: 'Dana', to: 'Acme', relationType: 'likes' },
      ],
    })
    expect(await run('read_graph', {})).toEqual({
      entities: [
        { name: 'Acme', entityType: 'organisation', observations: [] },
        { name: 'Dana', entityType: 'person', observations: ['Climbs'] },
        { name: 'Initech', entityType: 'organisation', observations: [] },
      ],
      relations: [
        { from: 'Dana', to: 'Initech', relationType: 'works_at' },
        { from: 'Dana', to: 'Acme', relationType: 'likes' },
      ],
    })
    // Acme is kept in the history: Dana worked there until Initech.
    const dana = (await memory.entities.resolve(project.id, 'Dana'))!
    expect((await memory.relations.history(project.id, dana.id, 'works_at')).map((r) => r.validTo !== undefined)).toEqual([true, false])
    expect(await run('add_observations', { observations: [{ entityName: 'dana', contents: ['Climbs', 'Drinks tea'] }] })).toEqual({
      results: [{ entityName: 'dana', addedObservations: ['Drinks tea'] }],
    })
    await expect(run('add_observations', { observations: [{ entityName: 'Ghost', contents: ['x'] }] })).rejects.toThrow('Entity with name Ghost not found')
    expect(await run('search_nodes', { query: 'TEA' })).toEqual({
      entities: [{ name: 'Dana', entityType: 'person', observations: ['Climbs', 'Drinks tea'] }],
      relations: [
        { from: 'Dana', to: 'Acme', relationType: 'likes' },
        { from: 'Dana', to: 'Initech', relationType: 'works_at' },
      ],
    })
    expect(await run('open_nodes', { names: ['Initech', 'Nobody'] })).toEqual({
      entities: [{ name: 'Initech', entityType: 'organisation', observations: [] }],
      relations: [{ from: 'Dana', to: 'Initech', relationType: 'works_at' }],
    })
    expect(await run('delete_observations', { deletions: [{ entityName: 'Dana', observations: ['Climbs', 'never'] }] })).toEqual({
      success: true,
      message: 'Deleted 1 of 2 observations.',
    })
    expect(await run('delete_relations', { relations: [{ from: 'Dana', to: 'Acme', relationType: 'likes' }] })).toEqual({
      success: true,
      message: 'Relations deleted successfully',
    })
    expect(await run('delete_entities', { entityNames: ['Initech', 'Ghost'] })).toEqual({ success: true, message: 'Deleted 1 of 2 entities. Not found: Ghost' })
    expect(await run('read_graph', {})).toEqual({
      entities: [
        { name: 'Acme', entityType: 'organisation', observations: [] },
        { name: 'Dana', entityType: 'person', observations: ['Drinks tea'] },
      ],
      // Deleting Initech deletes the assertion that closed Acme: the job before it holds again.
      relations: [{ from: 'Dana', to: 'Acme', relationType: 'works_at' }],
    })
  })

  it('runs in a generateText loop; a failing call reaches the model as the tool’s error', async () => {
    const { project, memory, tools } = await setup()
    const model = new MockLanguageModelV3({
      doGenerate: [
        toolCallResult('create_entities', { entities: [{ name: 'Ada', entityType: 'person', observations: ['Prefers dark mode'] }] }),
        toolCallResult('add_observations', { observations: [{ entityName: 'Bob', contents: ['x'] }] }),
        toolCallResult('open_nodes', { names: ['Ada'] }),
        textResult('Noted.'),
      ],
    })
    const result = await generateText({ model, tools, stopWhen: stepCountIs(6), prompt: 'I prefer dark mode.' })
    expect(result.text).toBe('Noted.')
    expect(JSON.stringify(model.doGenerateCalls[2]?.prompt)).toContain('Entity with name Bob not found')
    expect(result.steps[2]?.toolResults[0]?.output).toEqual({
      entities: [{ name: 'Ada', entityType: 'person', observations: ['Prefers dark mode'] }],
      relations: [],
    })
    expect((await memory.entities.resolve(project.id, 'ada'))?.observations).toEqual(['Prefers dark mode'])
  })

  it('refuses a memory without knowledge and bad options', async () => {
    const { memory } = await setup()
    expect(() => knowledgeTools({} as never, { projectId: 'p' })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(() => knowledgeTools(memory, { projectId: '' })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(() => knowledgeTools(memory, { projectId: 'p', extra: 1 } as never)).toThrow(expect.objectContaining({ code: 'invalid_input' }))
  })
})
