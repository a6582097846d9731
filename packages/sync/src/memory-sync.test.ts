import 'fake-indexeddb/auto'
import { afterEach, describe, expect, it } from 'vitest'
import { MemoryError, type Memory, type SyncState } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import { createLoopbackNetwork, startSync, type Sync } from '@engram/sync'
import { openTestMemory } from '../../../test/support/memory.js'

let run = 0
const opened: { memory: Memory; syncs: Sync[] }[] = []
afterEach(async () => {
  for (const { memory, syncs } of opened.splice(0)) {
    for (const sync of syncs) await sync.close()
    await memory.close()
  }
})

/** A store with project `p` synced, not yet syncing. */
async function store() {
  const memory = await openTestMemory()
  await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: true } })
  const entry = { memory, syncs: [] as Sync[] }
  opened.push(entry)
  const network = createLoopbackNetwork()
  const prefix = `memory-sync-${++run}`
  const start = (name = 'a') => {
    const sync = startSync(memory, { connect: network.connector(name), docName: (projectId) => `${prefix}:${name}:${projectId}`, onError: () => {} })
    entry.syncs.push(sync)
    return sync
  }
  return { memory, network, start }
}

/** Resolves with the project's first sync state (the current one included) that passes `test`; waits for events, not time. */
async function stateWhere(memory: Memory, projectId: string, test: (state: SyncState) => boolean): Promise<SyncState> {
  let found!: (state: SyncState) => void
  const match = new Promise<SyncState>((resolve) => {
    found = resolve
  })
  const off = await memory.sync.onStatus((p, state) => {
    if (p === projectId && test(state)) found(state)
  })
  const now = await memory.sync.status(projectId)
  if (test(now)) found(now)
  try {
    return await match
  } finally {
    await off()
  }
}

describe('memory.sync in process', () => {
  it('is off before startSync: status off, whenSynced refused, not leader, flush a no-op', async () => {
    const { memory } = await store()
    expect(memory.mode).toBe('local')
    expect(await memory.sync.status('p')).toBe('off')
    expect(await memory.sync.isLeader()).toBe(false)
    await expect(memory.sync.flush()).resolves.toBeUndefined()
    const error = await memory.sync.whenSynced('p').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MemoryError)
    expect(error).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('startSync') })
    expect((await memory.status.get()).sync).toEqual({ state: 'off', projects: {} })
    await expect(memory.sync.status('')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.sync.onStatus('x' as never)).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('follows the engine once startSync attaches, in memory.sync and memory.status', async () => {
    const { memory, network, start } = await store()
    const states: [string, SyncState][] = []
    const leader: boolean[] = []
    await memory.sync.onStatus((projectId, state) => states.push([projectId, state]))
    await memory.sync.onLeaderChange((l) => leader.push(l))
    const sync = start()
    expect(leader).toEqual([true])
    expect(await memory.sync.isLeader()).toBe(true)
    await memory.sync.whenSynced('p')
    expect(states).toEqual([
      ['p', 'connecting'],
      ['p', 'synced'],
    ])
    expect(await memory.sync.status('p')).toBe(sync.status('p'))
    expect(await memory.sync.status('p')).toBe('synced')
    expect(await memory.sync.status('user')).toBe(sync.status('user'))
    expect((await memory.status.get()).sync).toEqual({ state: 'ok', projects: { p: 'synced' } })

    network.disconnect('a')
    expect(await stateWhere(memory, 'p', (s) => s === 'offline')).toBe('offline')
    expect(sync.status('p')).toBe('offline')
    expect((await memory.status.get()).sync.projects).toEqual({ p: 'offline' })
    network.reconnect('a')
    await stateWhere(memory, 'p', (s) => s === 'synced')
    expect(sync.status('p')).toBe('synced')

    await memory.facts.set('p', 'k', 1)
    await memory.sync.flush()
    expect(await replicationOf(memory).pending({ projectId: 'p' })).toEqual([])
  })

  it('refuses a second startSync on the same store with conflict, leaving the first one running', async () => {
    const { memory, start } = await store()
    const first = start()
    await memory.sync.whenSynced('p')
    let second: Sync | undefined
    const error = await Promise.resolve()
      .then(() => {
        second = start('b')
      })
      .catch((e: unknown) => e)
    expect(second).toBeUndefined()
    expect(error).toBeInstanceOf(MemoryError)
    expect(error).toMatchObject({ code: 'conflict' })
    expect(first.status('p')).toBe('synced')
    expect(await memory.sync.status('p')).toBe('synced')
    expect(await memory.sync.isLeader()).toBe(true)
  })

  it('is off again after the engine closes, and a new startSync may attach', async () => {
    const { memory, start } = await store()
    const leader: boolean[] = []
    await memory.sync.onLeaderChange((l) => leader.push(l))
    const first = start()
    await memory.sync.whenSynced('p')
    await first.close()
    expect(leader).toEqual([true, false])
    expect(await memory.sync.status('p')).toBe('off')
    expect(await memory.sync.isLeader()).toBe(false)
    expect((await memory.status.get()).sync).toEqual({ state: 'off', projects: {} })
    await expect(memory.sync.whenSynced('p')).rejects.toMatchObject({ code: 'invalid_input' })
    start()
    await memory.sync.whenSynced('p')
    expect(await memory.sync.status('p')).toBe('synced')
    expect(leader).toEqual([true, false, true])
  })

  it('memory.close() stops the attached sync', async () => {
    const { memory, start } = await store()
    const sync = start()
    await memory.sync.whenSynced('p')
    const stopped = new Promise<void>((resolve) =>
      sync.onStatus((p, s) => {
        if (p === 'p' && s === 'off') resolve()
      }),
    )
    await memory.close()
    await stopped
    expect(sync.status('p')).toBe('off')
    await expect(memory.sync.status('p')).rejects.toMatchObject({ code: 'closed' })
  })

  it('a second close() resolves only once the first has stopped every mirror', async () => {
    const { memory, start } = await store()
    const sync = start()
    await memory.sync.whenSynced('p')
    const first = sync.close()
    await sync.close()
    try {
      expect(sync.status('p')).toBe('off')
    } finally {
      await first
    }
  })

  it('an unsubscribed sync listener hears nothing more', async () => {
    const { memory, network, start } = await store()
    const first: SyncState[] = []
    const second: SyncState[] = []
    const off = await memory.sync.onStatus((_p, s) => first.push(s))
    await memory.sync.onStatus((_p, s) => second.push(s))
    start()
    await memory.sync.whenSynced('p')
    await off()
    network.disconnect('a')
    await stateWhere(memory, 'p', (s) => s === 'offline')
    expect(second).toEqual(['connecting', 'synced', 'offline'])
    expect(first).toEqual(['connecting', 'synced'])
  })
})
