import { Dexie } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { statusWhere } from '../../../../test/support/status.js'
import { MemoryError } from './errors.js'
import { loadOnUse, methodsOnUse } from './load-on-use.js'
import type { Dump } from '../dump/dump-validate.js'
import type { SyncState } from './status.js'
import type { SyncEngine } from '../replication/sync-api.js'

describe('loadOnUse', () => {
  it('loads once however many calls wait for it', async () => {
    const load = vi.fn(async () => ({ answer: 42 }))
    const get = loadOnUse('test', load)
    const [a, b] = await Promise.all([get(), get()])
    expect(a).toBe(b)
    expect(await get()).toEqual({ answer: 42 })
    expect(load).toHaveBeenCalledTimes(1)
  })

  it('turns a failed load into MemoryError internal with the cause, and tries again on the next call', async () => {
    const cause = new TypeError('Failed to fetch dynamically imported module')
    const load = vi.fn<() => Promise<string>>().mockRejectedValueOnce(cause).mockResolvedValueOnce('loaded')
    const get = loadOnUse('export', load)
    const error = await get().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MemoryError)
    expect(error).toMatchObject({ code: 'internal', cause })
    expect((error as Error).message).toContain('export')
    expect(await get()).toBe('loaded')
    expect(load).toHaveBeenCalledTimes(2)
  })
})

describe('methodsOnUse', () => {
  it('forwards arguments, results and failures to the loaded methods, with the loaded object as this', async () => {
    const impl = {
      factor: 3,
      async times(n: number) {
        return n * this.factor
      },
      async fail(): Promise<never> {
        throw new MemoryError('not_found', 'nothing here')
      },
    }
    const api = methodsOnUse(async () => impl, ['times', 'fail'])
    expect(Object.keys(api)).toEqual(['times', 'fail'])
    expect(await api.times(2)).toBe(6)
    await expect(api.fail()).rejects.toMatchObject({ code: 'not_found' })
  })
})

/** Mocks the module at `path` (from this file) so that loading it fails, until the returned function is called. */
function failingChunk(path: string): () => void {
  let failing = true
  vi.doMock(path, async (importOriginal) => {
    if (failing) throw new TypeError(`Failed to fetch dynamically imported module: ${path}`)
    return importOriginal()
  })
  return () => {
    failing = false
  }
}

describe('a store whose code chunk fails to load', () => {
  afterEach(() => {
    vi.doUnmock('./dump.js')
    vi.doUnmock('./search/search.js')
    vi.doUnmock('./search/merger.js')
    vi.doUnmock('./blocks.js')
    vi.doUnmock('./search/index-clear.js')
    vi.doUnmock('./fact-edits.js')
    vi.doUnmock('./search/text-index.js')
    vi.resetModules()
  })

  it("rejects a replace import with internal while the index clearing's chunk fails to load, changing nothing, and imports on a later call", async () => {
    vi.resetModules()
    const loads = failingChunk('../search/index/index-clear.js')
    const { openMemory } = await import('../compose/open-memory.js')
    const memory = await openMemory({ appId: 'lazy', userId: 'clear-fails', indexedDB: new IDBFactory(), IDBKeyRange })
    try {
      await memory.projects.create({ name: 'P', id: 'p' })
      const session = await memory.sessions.create('p')
      await memory.messages.append(session.id, { role: 'user', content: 'the kettle is in the shed' })
      const dump = await memory.export('p')
      await memory.messages.append(session.id, { role: 'user', content: 'the ladder is in the garage' })
      const error = await memory.import(dump, { mode: 'replace' }).catch((e: unknown) => e)
      expect(error).toMatchObject({ name: 'MemoryError', code: 'internal' })
      expect((error as Error).message).toContain('index clearing')
      expect((await memory.search('p', 'ladder')).map((h) => h.text)).toContain('the ladder is in the garage')
      expect(await memory.messages.tail(session.id, 10)).toHaveLength(2)
      loads()
      await memory.import(dump, { mode: 'replace' })
      expect((await memory.search('p', 'ladder')).map((h) => h.text)).not.toContain('the ladder is in the garage')
      expect((await memory.search('p', 'kettle')).map((h) => h.text)).toEqual(['the kettle is in the shed'])
      expect(await memory.messages.tail(session.id, 10)).toHaveLength(1)
    } finally {
      await memory.close()
    }
  })

  it('packs an import right after open into batch rows and a posting segment while the index merger is still loading', async () => {
    vi.resetModules()
    // The merger's chunk arrives only once an import asks for it (never, if the import does not wait for it).
    let release: () => void = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    vi.doMock('../search/index/merger.js', async (importOriginal) => {
      await released
      return importOriginal()
    })
    vi.doMock('../search/index/text-index.js', async (importOriginal) => {
      const real = await importOriginal<typeof import('../search/index/text-index.js')>()
      const createTextIndex: typeof real.createTextIndex = (...args) => {
        const engine = real.createTextIndex(...args)
        const prepare = engine.prepareBulk!.bind(engine)
        engine.prepareBulk = () => {
          release()
          return prepare()
        }
        return engine
      }
      return { ...real, createTextIndex }
    })
    const { openMemory } = await import('../compose/open-memory.js')
    const indexedDB = new IDBFactory()
    // Internal options of the index: merge a batch of 100 inline, never merge in the background.
    type Options = Parameters<typeof openMemory>[0]
    const options = { appId: 'lazy', userId: 'late-merger', indexedDB, IDBKeyRange, inlineMergeAt: 100, mergeDelayMs: Infinity } as Options
    // A dump written by hand: no store opens (and loads the merger) before the one that imports it.
    const T = Date.UTC(2026, 0, 1)
    const sessionId = '01900000-0000-7000-8000-000000000000'
    const dump = {
      format: 'engram-dump',
      version: 1,
      exportedAt: T,
      tables: {
        projects: [{ id: 'p', name: 'P', sync: { enabled: false }, createdAt: T, updatedAt: T }],
        sessions: [{ id: sessionId, projectId: 'p', status: 'active', startedAt: T, lastActiveAt: T, lastSeq: 300 }],
        messages: Array.from({ length: 300 }, (_, i) => ({
          id: `0190${String(i).padStart(4, '0')}-0000-7000-8000-000000000001`,
          sessionId,
          projectId: 'p',
          seq: i + 1,
          role: 'user',
          content: i === 7 ? 'the lantern by the harbor' : `note ${i} on the garden`,
          tokens: 5,
          createdAt: T + i,
        })),
      },
    } as Dump
    const memory = await openMemory(options)
    try {
      await memory.import(dump, { mode: 'merge' })
      const raw = await new Dexie('engram:lazy:late-merger', { indexedDB, IDBKeyRange }).open()
      // Without the merger the 300 documents would be 300 rows in the unmerged tail, and no segment.
      expect(await raw.table('textSegs').count()).toBeGreaterThan(0)
      expect(await raw.table('textDocs').count()).toBeLessThan(30)
      raw.close()
      expect((await memory.search('p', 'lantern')).map((h) => h.text)).toContain('the lantern by the harbor')
    } finally {
      await memory.close()
    }
  })

  it('opens and writes while the index merger fails to load; the merge that needs it reports the failure and a later merge loads it', async () => {
    vi.resetModules()
    const loads = failingChunk('../search/index/merger.js')
    const reported = new Promise<unknown>((resolve) => vi.stubGlobal('reportError', resolve))
    let merged: (() => void) | undefined
    const mergedOnce = new Promise<void>((resolve) => {
      merged = resolve
    })
    const { openMemory } = await import('../compose/open-memory.js')
    // mergeDelayMs and onMerge are search internals openMemory accepts for tests.
    const internals = { mergeDelayMs: 0, onMerge: () => merged?.() }
    const memory = await openMemory({ appId: 'lazy', userId: 'merger-fails', indexedDB: new IDBFactory(), IDBKeyRange, ...internals })
    try {
      await memory.facts.set('user', 'diet', 'vegetarian')
      const error = await reported
      expect(error).toMatchObject({ name: 'MemoryError', code: 'internal' })
      expect((error as Error).message).toContain('index merger')
      loads()
      await memory.facts.set('user', 'city', 'Lisbon')
      await mergedOnce
      expect((await memory.facts.get('user', 'diet'))?.value).toBe('vegetarian')
      expect((await memory.search('user', 'Lisbon')).map((hit) => hit.text)).toEqual(['city: Lisbon'])
    } finally {
      vi.unstubAllGlobals()
      await memory.close()
    }
  })

  it('rejects the blocks namespace with internal while its chunk fails to load, and loads it on a later call', async () => {
    vi.resetModules()
    const loads = failingChunk('../blocks/blocks.js')
    const { createMemory } = await import('../compose/create-memory.js')
    const { factsModule } = await import('../facts/facts-module.js')
    const memory = await createMemory({ appId: 'lazy', userId: 'blocks-fail', indexedDB: new IDBFactory(), IDBKeyRange, modules: [factsModule()] })
    try {
      await expect(memory.blocks.set('user', 'persona', 'Helpful.')).rejects.toMatchObject({ name: 'MemoryError', code: 'internal' })
      await memory.facts.set('user', 'diet', 'vegetarian')
      loads()
      await memory.blocks.set('user', 'persona', 'Helpful.')
      expect((await memory.blocks.get('user', 'persona'))?.value).toBe('Helpful.')
    } finally {
      await memory.close()
    }
  })

  it('rejects the facts methods that load on use with internal while their chunk fails to load; set, get, list and delete work', async () => {
    vi.resetModules()
    const loads = failingChunk('../facts/fact-edits.js')
    const { createMemory } = await import('../compose/create-memory.js')
    const { factsModule } = await import('../facts/facts-module.js')
    const memory = await createMemory({ appId: 'lazy', userId: 'fact-edits-fail', indexedDB: new IDBFactory(), IDBKeyRange, modules: [factsModule()] })
    try {
      await memory.facts.set('user', 'diet', 'vegetarian')
      await expect(memory.facts.history('user', 'diet')).rejects.toMatchObject({ name: 'MemoryError', code: 'internal' })
      expect(await memory.facts.delete('user', 'diet')).toBe(true)
      expect((await memory.facts.list('user')).items).toEqual([])
      loads()
      expect(await memory.facts.restore('user', 'diet')).toMatchObject({ key: 'diet', value: 'vegetarian', version: 3 })
      expect((await memory.facts.history('user', 'diet')).map((v) => v.deleted)).toEqual([false, true, false])
    } finally {
      await memory.close()
    }
  })

  it('rejects stats and export with MemoryError internal instead of hanging, and the rest of the store works', async () => {
    vi.resetModules()
    vi.doMock('../dump/dump.js', () => {
      throw new TypeError('Failed to fetch dynamically imported module: dump.js')
    })
    const { openMemory } = await import('../compose/open-memory.js')
    const memory = await openMemory({ appId: 'lazy', userId: 'chunk-fails', indexedDB: new IDBFactory(), IDBKeyRange })
    try {
      await expect(memory.stats()).rejects.toMatchObject({ name: 'MemoryError', code: 'internal' })
      await expect(memory.export()).rejects.toMatchObject({ name: 'MemoryError', code: 'internal' })
      await memory.facts.set('user', 'diet', 'vegetarian')
      expect((await memory.facts.get('user', 'diet'))?.value).toBe('vegetarian')
    } finally {
      await memory.close()
    }
  })

  it('shows a search chunk that fails to load with an embedder in memory.status, and search rejects with internal', async () => {
    vi.resetModules()
    vi.doMock('../search/search.js', () => {
      throw new TypeError('Failed to fetch dynamically imported module: search.js')
    })
    const { openMemory } = await import('../compose/open-memory.js')
    const embedder = { dimensions: 2, embed: async (texts: string[]) => texts.map(() => new Float32Array([1, 0])) }
    const memory = await openMemory({ appId: 'lazy', userId: 'search-fails', indexedDB: new IDBFactory(), IDBKeyRange, embedder })
    try {
      const status = await statusWhere(memory, (s) => s.embedder.state === 'failing')
      expect(status.embedder.lastError).toMatchObject({ source: 'embedder', code: 'internal' })
      await expect(memory.search('user', 'diet')).rejects.toMatchObject({ name: 'MemoryError', code: 'internal' })
    } finally {
      await memory.close()
    }
  })
})

describe('subscriptions of namespaces whose queries load on use', () => {
  it('registers a sync listener at once: one added without awaiting sees the states of an engine attached right after', async () => {
    const { openMemory } = await import('../compose/open-memory.js')
    const { replicationOf } = await import('../replication/replication-seam.js')
    const memory = await openMemory({ appId: 'lazy', userId: 'sync-listeners', indexedDB: new IDBFactory(), IDBKeyRange })
    const seen: string[] = []
    void memory.sync.onStatus((projectId, state) => seen.push(`${projectId}:${state}`))
    void memory.sync.onLeaderChange((leader) => seen.push(`leader:${leader}`))
    let emit: ((projectId: string, state: SyncState) => void) | undefined
    const engine: SyncEngine = {
      status: () => 'connecting',
      onStatus(listener) {
        emit = listener
        return () => {}
      },
      flush() {},
      whenSynced: async () => {},
      details: () => ({ status: 'connecting', problems: [] }),
      close() {},
    }
    try {
      const detach = replicationOf(memory).attachSync(engine)
      emit?.('p1', 'connecting')
      expect(seen).toEqual(['leader:true', 'p1:connecting'])
      expect(await memory.sync.status('p1')).toBe('connecting')
      expect(await memory.sync.isLeader()).toBe(true)
      detach()
      expect(seen).toEqual(['leader:true', 'p1:connecting', 'leader:false'])
    } finally {
      await memory.close()
    }
  })
})
