import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  archiveModule,
  contextModule,
  conversationsModule,
  createMemory,
  factsModule,
  importerModule,
  MemoryError,
  openMemory,
  runtimeModule,
  searchModule,
  type Memory,
} from '@engram/core'

let counter = 0
const base = () => ({ appId: 'compose', userId: `u${++counter}`, indexedDB: new IDBFactory(), IDBKeyRange })

/** Every namespace and member a store has whatever its modules. */
const BASE = ['appId', 'userId', 'deviceId', 'mode', 'projects', 'changes', 'status', 'sync', 'encryption', 'stats', 'export', 'persist', 'close', 'closed']
/** The members each module adds. */
const ADDS: Record<string, string[]> = {
  facts: ['facts', 'blocks'],
  conversations: ['sessions', 'messages', 'summaries'],
  archive: ['archive'],
  search: ['search'],
  context: ['context'],
  runtime: ['journal', 'runs', 'tasks', 'usage', 'lessons', 'turns', 'extraction', 'observations'],
  importer: ['import'],
  limitations: ['limitations'],
  patterns: ['patterns'],
  spaces: ['spaces'],
  artifacts: ['artifacts'],
  people: ['people', 'adopt'],
  knowledge: ['entities', 'relations'],
}
const members = (memory: object) => Object.keys(memory).sort()

describe('createMemory', () => {
  it('composes a store with the base and only the listed modules', async () => {
    const memory = await createMemory({ ...base(), modules: [factsModule()] })
    expect(members(memory)).toEqual([...BASE, ...ADDS.facts!].sort())
    expect(memory.mode).toBe('local')
    expect(memory).not.toHaveProperty('search')
    expect(memory).not.toHaveProperty('sessions')
    expect(memory).not.toHaveProperty('import')
    expectTypeOf(memory).toHaveProperty('facts')
    expectTypeOf(memory).not.toHaveProperty('search')
    await memory.close()
  })

  it.each([
    [[conversationsModule()], ['conversations']],
    [
      [archiveModule(), searchModule()],
      ['archive', 'search'],
    ],
    [
      [factsModule(), conversationsModule(), archiveModule(), contextModule(), runtimeModule()],
      ['facts', 'conversations', 'archive', 'context', 'runtime'],
    ],
    [[importerModule()], ['importer']],
  ])("a store of %# has exactly its modules' namespaces", async (modules, names) => {
    const memory = await createMemory({ ...base(), modules })
    expect(members(memory)).toEqual([...BASE, ...names.flatMap((n) => ADDS[n]!)].sort())
    await memory.close()
  })

  it('writes, reads and lists facts without the search module', async () => {
    const memory = await createMemory({ ...base(), modules: [factsModule()] })
    await memory.projects.create({ name: 'P', id: 'p' })
    const fact = await memory.facts.set('p', 'city', 'Lisbon', { tags: ['geo'] })
    expect(await memory.facts.get('p', 'city')).toEqual(fact)
    expect((await memory.facts.list('p', { tag: 'geo' })).items.map((f) => f.key)).toEqual(['city'])
    await memory.facts.delete('p', 'city')
    expect((await memory.facts.deleted('p')).items.map((f) => f.key)).toEqual(['city'])
    expect(await memory.blocks.set('p', 'persona', 'brief')).toMatchObject({ value: 'brief' })
    expect(await memory.stats('p')).toMatchObject({ facts: 0 })
    await memory.close()
  })

  it('opens the same database as openMemory: what one composition wrote, another reads', async () => {
    const options = base()
    const small = await createMemory({ ...options, modules: [factsModule()] })
    await small.facts.set('user', 'name', 'Ada')
    await small.close()
    const full = await openMemory(options)
    expect((await full.facts.get('user', 'name'))?.value).toBe('Ada')
    expect(full.deviceId).toBe(small.deviceId)
    // the search index catches up only with writes made while it is there; the fact itself is intact
    await full.facts.set('user', 'name', 'Ada Lovelace')
    expect((await full.search('user', 'Lovelace')).map((h) => h.id)).toContain('user/name')
    await full.close()
  })

  it('types a store of several modules with the namespaces of each', () => {
    type Store = Awaited<
      ReturnType<typeof createMemory<readonly [ReturnType<typeof factsModule>, ReturnType<typeof conversationsModule>, ReturnType<typeof contextModule>]>>
    >
    expectTypeOf<keyof Store>().toEqualTypeOf<
      | 'appId'
      | 'userId'
      | 'deviceId'
      | 'mode'
      | 'projects'
      | 'changes'
      | 'status'
      | 'sync'
      | 'encryption'
      | 'stats'
      | 'export'
      | 'persist'
      | 'close'
      | 'closed'
      | 'facts'
      | 'blocks'
      | 'sessions'
      | 'messages'
      | 'summaries'
      | 'context'
    >()
    expectTypeOf<Awaited<ReturnType<typeof createMemory<readonly [ReturnType<typeof factsModule>]>>>>().toHaveProperty('blocks')
  })

  it('builds context without the search module from what the store has (no recalled section)', async () => {
    const memory = await createMemory({ ...base(), modules: [factsModule(), conversationsModule(), contextModule()] })
    await memory.facts.set('user', 'city', 'Lisbon')
    const session = await memory.sessions.create('user')
    await memory.messages.appendExchange(session.id, 'Where do I live?', 'In Lisbon.')
    const context = await memory.context.build('user', { sessionId: session.id, query: 'where do I live', budget: 500 })
    expect(context.sections.map((s) => s.name)).toEqual(['facts', 'recent'])
    expect(context.text).toContain('Lisbon')
    const bare = await createMemory({ ...base(), modules: [contextModule()] })
    expect(await bare.context.build('user', { query: 'anything', budget: 100 })).toMatchObject({ sections: [], text: '' })
    await memory.close()
    await bare.close()
  })

  it('refuses a module whose requirement is missing, naming both', async () => {
    const error = await createMemory({ ...base(), modules: [factsModule(), runtimeModule()] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MemoryError)
    expect(error).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/runtime.*(conversations|archive|context)/) })
  })

  it('accepts requirements listed after the module that needs them', async () => {
    const memory = await createMemory({ ...base(), modules: [runtimeModule(), contextModule(), archiveModule(), conversationsModule(), factsModule()] })
    expect(memory).toHaveProperty('turns')
    await memory.close()
  })

  it('refuses a module listed twice, and anything that is not a module', async () => {
    for (const modules of [
      [factsModule(), factsModule()],
      [searchModule(), searchModule({})],
    ]) {
      const error = await createMemory({ ...base(), modules }).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('twice') })
    }
    for (const modules of [undefined, 'facts', [{}], [factsModule, 1], [{ name: 'x' }]]) {
      await expect(createMemory({ ...base(), modules } as never)).rejects.toMatchObject({ code: 'invalid_input' })
    }
  })

  it('refuses unknown options, naming them, before touching storage', async () => {
    const options = base()
    const error = await createMemory({ ...options, modules: [factsModule()], embedder: {} } as never).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('embedder') })
    const moduleOption = await Promise.resolve()
      .then(() => searchModule({ embeder: {} } as never))
      .catch((e: unknown) => e)
    expect(moduleOption).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('embeder') })
    expect(() => contextModule({ sumarizer: {} } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_input', message: expect.stringContaining('sumarizer') }),
    )
    expect(() => runtimeModule({ pricng: {} } as never)).toThrow(expect.objectContaining({ code: 'invalid_input', message: expect.stringContaining('pricng') }))
    await expect(createMemory({ ...options, appId: '', modules: [] })).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await options.indexedDB.databases()).toEqual([])
  })

  it('an empty list of modules gives the base only, which still works', async () => {
    const memory = await createMemory({ ...base(), modules: [] })
    expect(members(memory)).toEqual([...BASE].sort())
    const project = await memory.projects.create({ name: 'Only projects' })
    expect((await memory.projects.list()).map((p) => p.id)).toContain(project.id)
    expect(await memory.status.get()).toMatchObject({ embedder: { state: 'off' }, summarizer: { state: 'off' }, extractor: { state: 'off' } })
    expect(await memory.sync.status(project.id)).toBe('off')
    await memory.close()
    await expect(memory.projects.list()).rejects.toMatchObject({ code: 'closed' })
  })

  it('openMemory is the store with every module', async () => {
    const memory: Memory = await openMemory(base())
    expect(members(memory)).toEqual([...BASE, ...Object.values(ADDS).flat()].sort())
    await memory.close()
  })
})
