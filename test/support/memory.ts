import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { openMemory, type Memory, type MemoryOptions } from '@engram/core'

let counter = 0

/**
 * Opens a memory store on a fresh fake-indexeddb factory: one database per
 * test, nothing shared. Pass `indexedDB` to reopen the same database.
 */
export async function openTestMemory(options: Partial<MemoryOptions> = {}): Promise<Memory & { indexedDB: IDBFactory }> {
  if ((globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.ENGRAM_TEST_GLOBALS === '1') return openOnGlobals(options)
  const indexedDB = (options.indexedDB as IDBFactory | undefined) ?? new IDBFactory()
  const memory = await openMemory({
    appId: 'test',
    userId: `u${++counter}`,
    ...(await testEncryption()),
    ...options,
    indexedDB,
    IDBKeyRange,
  })
  return Object.assign(memory, { indexedDB })
}

/**
 * The same store on the global IndexedDB (`fake-indexeddb/auto`, one per test
 * file), nothing injected: how an app in a browser opens it. The factory a test
 * gets back stands for the global one.
 */
async function openOnGlobals(options: Partial<MemoryOptions>): Promise<Memory & { indexedDB: IDBFactory }> {
  const { indexedDB: _given, IDBKeyRange: _range, ...rest } = options
  const memory = await openMemory({ appId: 'test', userId: `u${++counter}`, ...(await testEncryption()), ...rest })
  return Object.assign(memory, { indexedDB: globalThis.indexedDB })
}

let sharedKey: Promise<CryptoKey> | undefined

/**
 * With ENGRAM_TEST_ENCRYPTION=1 (the `encrypted` test project) every store a test opens is
 * encrypted at rest with one key: the store's own tests then check that encryption changes nothing they see.
 */
async function testEncryption(): Promise<{ encryption?: { key: CryptoKey } }> {
  if ((globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.ENGRAM_TEST_ENCRYPTION !== '1') return {}
  sharedKey ??= crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])
  return { encryption: { key: await sharedKey } }
}

/** A clock for tests: starts at `start` and moves only when told. */
export function testClock(start = Date.UTC(2026, 0, 1)): { now: () => number; advance: (ms: number) => number; set: (t: number) => void } {
  let t = start
  return { now: () => t, advance: (ms) => (t += ms), set: (v) => void (t = v) }
}
