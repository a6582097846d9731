import { Dexie } from 'dexie'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { databaseName, MemoryError, openMemory } from '@engram/core'

describe('openMemory', () => {
  it('rejects bad options before touching storage', async () => {
    const indexedDB = new IDBFactory()
    await expect(openMemory({ appId: '', userId: 'u', indexedDB, IDBKeyRange })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(openMemory({ appId: 'a', userId: 'u', indexedDB, IDBKeyRange, embedder: { dimensions: 0 } as never })).rejects.toMatchObject({
      code: 'invalid_input',
    })
    await expect(openMemory({ appId: 'a', userId: 'u', indexedDB, IDBKeyRange, tokenizer: {} as never })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(openMemory(undefined as never)).rejects.toBeInstanceOf(MemoryError)
    expect(await indexedDB.databases()).toEqual([])
  })

  it('refuses a misspelt option with invalid_input naming it, before touching storage', async () => {
    const indexedDB = new IDBFactory()
    const embedder = { dimensions: 3, embed: async (texts: string[]) => texts.map(() => new Float32Array(3)) }
    for (const typo of ['embeder', 'sumarizer', 'extracter', 'prices', 'textindex']) {
      const error = await openMemory({ appId: 'a', userId: 'u', indexedDB, IDBKeyRange, [typo]: embedder } as never).catch((e: unknown) => e)
      expect(error, typo).toBeInstanceOf(MemoryError)
      expect(error, typo).toMatchObject({ code: 'invalid_input', message: expect.stringContaining(typo) })
    }
    expect(await indexedDB.databases()).toEqual([])
    const memory = await openMemory({ appId: 'a', userId: 'u', indexedDB, IDBKeyRange, embedder })
    expect(await memory.status.get()).toMatchObject({ embedder: { state: 'ok' } })
    await memory.close()
  })

  it('refuses an encryption option it cannot use (a passphrase instead of a key) before creating anything', async () => {
    const indexedDB = new IDBFactory()
    const error = await openMemory({ appId: 'a', userId: 'u', indexedDB, IDBKeyRange, encryption: { passphrase: 'secret' } } as never).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/encryption\.passphrase is not an option/) })
    expect(await indexedDB.databases()).toEqual([])
  })

  it('opens one database per app and user', async () => {
    const indexedDB = new IDBFactory()
    const a = await openMemory({ appId: 'app', userId: 'u1', indexedDB, IDBKeyRange })
    const b = await openMemory({ appId: 'app', userId: 'u2', indexedDB, IDBKeyRange })
    await a.facts.set('user', 'name', 'Ada')
    expect(await b.facts.get('user', 'name')).toBeUndefined()
    expect((await indexedDB.databases()).map((d) => d.name).sort()).toEqual([databaseName('app', 'u1'), databaseName('app', 'u2')])
    await a.close()
    await b.close()
  })

  it('refuses a database written by a newer schema with conflict, leaving it untouched', async () => {
    const indexedDB = new IDBFactory()
    const name = databaseName('app', 'future')
    const future = new Dexie(name, { indexedDB, IDBKeyRange })
    future.version(99).stores({ projects: 'id', facts: '[projectId+key]', somethingNew: 'id' })
    await future.open()
    await future.table('somethingNew').put({ id: 'kept' })
    future.close()
    const error = await openMemory({ appId: 'app', userId: 'future', indexedDB, IDBKeyRange }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MemoryError)
    expect(error).toMatchObject({ code: 'conflict' })
    expect((await indexedDB.databases()).find((d) => d.name === name)?.version).toBe(990)
    const again = new Dexie(name, { indexedDB, IDBKeyRange })
    again.version(99).stores({ projects: 'id', facts: '[projectId+key]', somethingNew: 'id' })
    expect(await again.table('somethingNew').get('kept')).toEqual({ id: 'kept' })
    await again.close()
  })
})
