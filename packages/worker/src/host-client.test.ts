import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import * as Comlink from 'comlink'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MemoryError, type Change, type Memory, type MemoryStatus } from '@engram/core'
import { connectMemory, exposeMemory, installTransferHandlers, type ConnectOptions, type MemoryHost, type StartSync, type SyncStatus } from '@engram/worker'
import { fakeLocks } from '../test/fake-locks.js'
import { statusWhere } from '../../../test/support/status.js'

let counter = 0

/** A host on one end of a Node MessageChannel, a client on the other (fake-indexeddb). */
function pair(startSync?: StartSync): {
  host: MemoryHost
  indexedDB: IDBFactory
  connect: (extra?: Partial<ConnectOptions>) => ReturnType<typeof connectMemory>
} {
  const indexedDB = new IDBFactory()
  const userId = `u${++counter}`
  const first = new MessageChannel()
  const host = exposeMemory({ endpoint: first.port1, memory: { indexedDB, IDBKeyRange }, locks: null, ...(startSync ? { startSync } : {}) })
  let used = false
  return {
    host,
    indexedDB,
    connect(extra = {}) {
      let port = first.port2
      if (used) {
        const next = new MessageChannel()
        host.connect(next.port1)
        port = next.port2
      }
      used = true
      return connectMemory(port, { appId: 'worker-test', userId, ...extra })
    },
  }
}

afterEach(() => {
  vi.unstubAllGlobals()
})

const nextTick = (ms = 20) => new Promise((r) => setTimeout(r, ms))

/** Resolves once `memory` holds (true) or has let go of (false) the sync leadership. */
async function leadership(memory: Memory, leader: boolean): Promise<void> {
  let changed!: () => void
  const done = new Promise<void>((resolve) => {
    changed = resolve
  })
  const off = await memory.sync.onLeaderChange((l) => {
    if (l === leader) changed()
  })
  if ((await memory.sync.isLeader()) === leader) changed()
  await done
  await off()
}

/** Resolves once the project's sync status (as `memory` reports it) is `state`. */
async function syncState(memory: Memory, projectId: string, state: SyncStatus): Promise<void> {
  let reached!: () => void
  const done = new Promise<void>((resolve) => {
    reached = resolve
  })
  const off = await memory.sync.onStatus((p, s) => {
    if (p === projectId && s === state) reached()
  })
  if ((await memory.sync.status(projectId)) === state) reached()
  await done
  await off()
}

/** A batch some subscriber will receive: pass `arrived` as (or call it from) the listener, await `batch`. */
function nextBatch() {
  let arrived!: (batch: Change[]) => void
  const batch = new Promise<Change[]>((resolve) => {
    arrived = resolve
  })
  return { batch, arrived }
}

describe('worker host and client over a MessageChannel', () => {
  it('serves projects, facts and messages with every call a promise', async () => {
    const { connect } = pair()
    const memory = await connect()
    expect(memory.appId).toBe('worker-test')
    expect(memory.deviceId).toMatch(/\w+/)
    const project = await memory.projects.create({ name: 'Alpha' })
    await memory.facts.set(project.id, 'lang', { name: 'TypeScript' }, { tags: ['pref'] })
    expect((await memory.facts.get(project.id, 'lang'))?.value).toEqual({ name: 'TypeScript' })
    const session = await memory.sessions.create(project.id)
    const [q, a] = await memory.messages.appendExchange(session.id, 'hello', 'hi there')
    expect([q.role, a.role]).toEqual(['user', 'assistant'])
    expect((await memory.messages.tail(session.id, 5)).map((m) => m.content)).toEqual(['hello', 'hi there'])
    await memory.close()
  })

  it('keeps MemoryError class, code and message across the boundary', async () => {
    const { connect } = pair()
    const memory = await connect()
    const error = await memory.facts.set('no-such-project', 'k', 1).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MemoryError)
    expect((error as MemoryError).code).toBe('not_found')
    const bad = await memory.facts.get('user', '').catch((e: unknown) => e)
    expect((bad as MemoryError).code).toBe('invalid_input')
    expect((bad as MemoryError).message).toMatch(/key/)
    await memory.close()
  })

  it('delivers change batches to a subscriber until it unsubscribes', async () => {
    const { connect } = pair()
    const memory = await connect()
    const seen: Change[][] = []
    const first = nextBatch()
    const off = await memory.changes.subscribe({ kinds: ['facts'] }, (batch) => {
      seen.push(batch)
      first.arrived(batch)
    })
    await memory.facts.set('user', 'a', 1)
    await first.batch
    expect(seen.flat().map((c) => [c.kind, c.op, c.projectId])).toEqual([['facts', 'put', 'user']])
    await off()
    // Nothing after the unsubscribe: a later write reaches another subscriber, and not this one.
    const marker = nextBatch()
    const offMarker = await memory.changes.subscribe({ kinds: ['facts'] }, marker.arrived)
    await memory.facts.set('user', 'b', 2)
    expect((await marker.batch).map((c) => c.id)).toEqual(['user/b'])
    expect(seen.length).toBe(1)
    await off() // idempotent
    await offMarker()
    await memory.close()
  })

  it('rejects calls after close() with `closed`, and the last connection closes the store', async () => {
    const { connect, host } = pair()
    const memory = await connect()
    expect(host.connections).toBe(1)
    await memory.close()
    expect(memory.closed).toBe(true)
    expect(host.connections).toBe(0)
    const error = await memory.facts.get('user', 'x').catch((e: unknown) => e)
    expect((error as MemoryError).code).toBe('closed')
    await memory.close() // idempotent
  })

  it('releases every MessagePort it opened: subscriptions on unsubscribe, app-supplied functions on close', async () => {
    const openPorts = () => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length
    await nextTick(100) // let ports closed by earlier tests go
    const base = openPorts()
    const { connect } = pair()
    const memory = await connect({ extractor: () => [], embedder: { dimensions: 2, embed: async (texts) => texts.map(() => new Float32Array(2)) } })
    const connected = openPorts()
    const offChanges = await memory.changes.subscribe({}, () => {})
    const offStatus = await memory.sync.onStatus(() => {})
    expect(openPorts()).toBeGreaterThan(connected)
    await offChanges()
    await offStatus()
    await nextTick()
    expect(openPorts()).toBe(connected)
    await memory.close()
    await nextTick(100)
    expect(openPorts()).toBe(base)
  })

  it('releases the app-supplied functions when the store cannot open', async () => {
    const openPorts = () => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length
    await nextTick(100)
    const base = openPorts()
    const { port1, port2 } = new MessageChannel()
    const host = exposeMemory({ endpoint: port1, memory: { indexedDB: new IDBFactory(), IDBKeyRange }, locks: null })
    const error = await connectMemory(port2, { appId: '', userId: 'u', extractor: () => [] }).catch((e: unknown) => e)
    expect((error as MemoryError).code).toBe('invalid_input')
    host.close()
    port2.close()
    await nextTick(100)
    expect(openPorts()).toBe(base)
  })

  it('shares one store between connections, as tabs on a SharedWorker do', async () => {
    const { connect, host } = pair()
    const a = await connect()
    const b = await connect()
    expect(host.connections).toBe(2)
    const shared = nextBatch()
    const off = await b.changes.subscribe({}, shared.arrived)
    await a.facts.set('user', 'shared', 'yes')
    expect(await shared.batch).toEqual([{ kind: 'facts', op: 'put', id: 'user/shared', projectId: 'user', origin: 'local' }])
    expect((await b.facts.get('user', 'shared'))?.value).toBe('yes')
    await off()
    await a.close()
    expect((await b.facts.get('user', 'shared'))?.value).toBe('yes')
    await b.close()
  })

  it('relays change batches between two hosts on one database (dedicated workers in two tabs)', async () => {
    const indexedDB = new IDBFactory()
    const userId = `relay${++counter}`
    const ports = [new MessageChannel(), new MessageChannel()]
    for (const { port1 } of ports) exposeMemory({ endpoint: port1, memory: { indexedDB, IDBKeyRange }, locks: null })
    const [a, b] = await Promise.all(ports.map(({ port2 }) => connectMemory(port2, { appId: 'worker-test', userId })))
    const seen: Change[] = []
    const marker = nextBatch()
    const off = await b!.changes.subscribe({ projectId: 'user', kinds: ['facts'] }, (batch) => {
      seen.push(...batch)
      if (batch.some((c) => c.id === 'user/marker')) marker.arrived(batch)
    })
    await a!.facts.set('user', 'from-a', 1)
    await a!.projects.create({ name: 'not matched by the filter' })
    await a!.facts.set('user', 'marker', 2)
    await marker.batch
    // In order, and the project change in between was filtered out.
    expect(seen.map((c) => [c.kind, c.id])).toEqual([
      ['facts', 'user/from-a'],
      ['facts', 'user/marker'],
    ])
    await off()
    await Promise.all([a!.close(), b!.close()])
  })

  it('rejects bad connect options before talking to the worker', async () => {
    const { port2 } = new MessageChannel()
    const error = await connectMemory(port2, { appId: 'x', userId: 'u', embedder: { dimensions: 0, embed: async () => [] } }).catch((e: unknown) => e)
    expect((error as MemoryError).code).toBe('invalid_input')
    port2.close()
  })

  it('refuses a misspelt option with invalid_input naming it, and still connects with the right one', async () => {
    const { connect } = pair()
    const embedder = { dimensions: 3, embed: async (texts: string[]) => texts.map(() => new Float32Array(3)) }
    const error = (await connect({ embeder: embedder } as never).catch((e: unknown) => e)) as MemoryError
    expect(error).toBeInstanceOf(MemoryError)
    expect(error.code).toBe('invalid_input')
    expect(error.message).toContain('embeder')
    const syncTypo = (await connect({ sync: { url: 'ws://relay.test', token: () => 't', encrypton: {} } } as never).catch((e: unknown) => e)) as MemoryError
    expect([syncTypo.code, syncTypo.message.includes('encrypton')]).toEqual(['invalid_input', true])
    const memory = await connect({ embedder })
    expect(await memory.status.get()).toMatchObject({ embedder: { state: 'ok' } })
    await memory.close()
  })

  it('calls the UI-side embedder from the host and gets Float32Arrays back', async () => {
    const { connect } = pair()
    let embedded!: (texts: string[]) => void
    const called = new Promise<string[]>((resolve) => {
      embedded = resolve
    })
    const memory = await connect({
      embedder: {
        dimensions: 3,
        embed: async (texts) => {
          embedded(texts)
          return texts.map((t) => new Float32Array([t.length, 1, 0]))
        },
      },
    })
    const project = await memory.projects.create({ name: 'Vec' })
    await memory.archive.create(project.id, 'the quick brown fox')
    expect(await called).toContain('the quick brown fox')
    // The vectors came back as Float32Arrays of the declared size: the embedder is ok, nothing failed.
    expect(await memory.status.get()).toMatchObject({ embedder: { state: 'ok' }, problems: [] })
    await memory.close()
  })

  it('shows a failing UI-side embedder in memory.status through the worker, and its recovery', async () => {
    const { connect } = pair()
    let failures = 1
    const memory = await connect({
      embedder: {
        dimensions: 3,
        embed: async (texts) => {
          if (failures-- > 0) throw new TypeError('no network')
          return texts.map(() => new Float32Array([1, 0, 0]))
        },
      },
    })
    const snapshots: MemoryStatus[] = []
    const off = await memory.status.subscribe((s) => snapshots.push(s))
    await memory.archive.create('user', 'the passport is in the top drawer')
    const failing = await statusWhere(memory, (s) => s.embedder.state === 'failing')
    expect(failing.embedder.lastError).toMatchObject({ source: 'embedder', code: 'internal', message: expect.stringContaining('no network') })
    expect(failing.problems).toHaveLength(1)
    await statusWhere(memory, (s) => s.embedder.state === 'ok')
    expect(snapshots.map((s) => s.embedder.state)).toEqual(['failing', 'ok'])
    await off()
    await memory.close()
  })

  it('a UI-side summarizer that throws: the context drops the overflow as summarizer_failed, and status shows it', async () => {
    const { connect } = pair()
    const memory = await connect({
      summarizer: {
        summarize: async () => {
          throw Object.assign(new RangeError('summarizer quota'), { status: 429 })
        },
      },
    })
    const session = await memory.sessions.create('user')
    for (let i = 0; i < 20; i++) await memory.messages.appendExchange(session.id, `question ${i} about the long trip ahead`, `answer ${i} with the details`)
    const context = await memory.context.build('user', { sessionId: session.id, budget: 150, sections: ['recent'] })
    expect(context.omitted.map((o) => o.reason)).toEqual(['summarizer_failed'])
    const status = await memory.status.get()
    expect(status.summarizer).toEqual({
      state: 'failing',
      lastError: expect.objectContaining({ source: 'summarizer', projectId: 'user', message: expect.stringContaining('summarizer quota') }),
    })
    await memory.close()
  })

  it('a UI-side extractor failure reaches the worker with its MemoryError code, or as internal, and shows in status', async () => {
    const { connect } = pair()
    const memory = await connect({
      extractor: async (exchange) => {
        if (exchange.turnId === 't1') throw new MemoryError('limit_exceeded', 'too many facts for this turn')
        if (exchange.turnId === 't2') throw new SyntaxError('the model returned broken JSON')
        return []
      },
    })
    const turn = async (turnId: string) => {
      await memory.turns.begin('user', { sessionId: 's', turnId, prompt: 'hi', budget: 50 })
      return memory.turns.end({ sessionId: 's', turnId, reply: 'hello' })
    }
    expect(await turn('t1')).toEqual({ written: 0, extractionError: { code: 'limit_exceeded', message: 'too many facts for this turn' } })
    expect(await turn('t2')).toEqual({ written: 0, extractionError: { code: 'internal', message: expect.stringContaining('the model returned broken JSON') } })
    const status = await memory.status.get()
    expect(status.extractor.state).toBe('failing')
    expect(status.problems.map((p) => [p.source, p.code])).toEqual([
      ['extractor', 'limit_exceeded'],
      ['extractor', 'internal'],
    ])
    expect(await turn('t3')).toEqual({ written: 0 })
    expect((await memory.status.get()).extractor.state).toBe('ok')
    await memory.close()
  })

  it("keeps a thrown MemoryError's class, code, message and cause through Comlink", async () => {
    installTransferHandlers()
    const { port1, port2 } = new MessageChannel()
    Comlink.expose(
      {
        quota: () => {
          throw new MemoryError('quota_exceeded', 'out of credits', { cause: new RangeError('402') })
        },
      },
      port1,
    )
    const remote = Comlink.wrap<{ quota(): void }>(port2)
    const quota = (await remote.quota().catch((e: unknown) => e)) as MemoryError
    expect(quota).toBeInstanceOf(MemoryError)
    expect([quota.code, quota.message]).toEqual(['quota_exceeded', 'out of credits'])
    expect((quota.cause as Error).name).toBe('RangeError')
    remote[Comlink.releaseProxy]()
    port2.close()
  })

  it("leaves the errors of the app's other Comlink endpoints exactly as Comlink delivers them", async () => {
    const throwPlain = () => {
      throw Object.assign(new TypeError('boom'), { extra: 1 })
    }
    const callOnce = async (comlink: typeof Comlink) => {
      const { port1, port2 } = new MessageChannel()
      comlink.expose({ plain: throwPlain }, port1)
      const remote = comlink.wrap<{ plain(): void }>(port2)
      const error = await remote.plain().then(
        () => undefined,
        (e: unknown) => e,
      )
      remote[comlink.releaseProxy]()
      port2.close()
      return error as Error
    }
    // A second copy of Comlink that Engram never touched: what the app would get without Engram.
    const comlinkDir = dirname(createRequire(import.meta.url).resolve('comlink/package.json'))
    const untouched = (await import(/* @vite-ignore */ `${join(comlinkDir, 'dist/esm/comlink.mjs')}?without-engram`)) as typeof Comlink
    expect(untouched.transferHandlers).not.toBe(Comlink.transferHandlers)
    const expected = await callOnce(untouched)

    installTransferHandlers()
    const actual = await callOnce(Comlink)
    expect(actual).not.toBeInstanceOf(MemoryError)
    expect(actual).toBeInstanceOf(Error)
    expect([actual.name, actual.message]).toEqual(['TypeError', 'boom'])
    expect(Object.getPrototypeOf(actual)).toBe(Object.getPrototypeOf(expected))
    expect(Object.getOwnPropertyNames(actual).sort()).toEqual(Object.getOwnPropertyNames(expected).sort())
    expect({ ...actual, stack: undefined }).toEqual({ ...expected, stack: undefined })
    expect(actual).not.toHaveProperty('code')
    expect((actual as Error & { extra?: number }).extra).toBe((expected as Error & { extra?: number }).extra)
    expect(actual.stack).toContain('boom')
  })

  it('turns any other failure of an Engram call into MemoryError internal at the client', async () => {
    const { port1, port2 } = new MessageChannel()
    // A host that opens, then fails a call with something that is not a MemoryError.
    Comlink.expose(
      {
        open: async (request: { appId: string; userId: string }) => ({ appId: request.appId, userId: request.userId, deviceId: 'dev', mode: 'port' }),
        facts: {
          get: () => {
            throw Object.assign(new TypeError('boom'), { extra: 1 })
          },
        },
        close: () => {},
      },
      port1,
    )
    const memory = await connectMemory(port2, { appId: 'worker-test', userId: 'odd-host' })
    const error = (await memory.facts.get('user', 'k').catch((e: unknown) => e)) as MemoryError
    expect(error).toBeInstanceOf(MemoryError)
    expect(error.code).toBe('internal')
    expect(error.message).toContain('boom')
    expect((error.cause as Error).name).toBe('TypeError')
    await memory.close()
    port1.close()
  })

  it('runs sync in the host and reports status and leadership', async () => {
    const listeners = new Set<(p: string, s: SyncStatus) => void>()
    const started: string[] = []
    let tokenFetched!: () => void
    const fetched = new Promise<void>((resolve) => {
      tokenFetched = resolve
    })
    let closedSync = 0
    const fake: StartSync = (_memory, options) => {
      started.push(options.url)
      void options.token().then((t) => {
        started.push(`token:${t}`)
        tokenFetched()
      })
      return {
        status: () => 'synced',
        onStatus: (l) => {
          listeners.add(l)
          return () => listeners.delete(l)
        },
        flush: () => {},
        close: () => {
          closedSync++
        },
      }
    }
    const { connect } = pair(fake)
    const memory = await connect({ sync: { url: 'ws://relay.test', token: () => 'tok-1' } })
    await leadership(memory, true)
    await fetched
    expect(await memory.sync.isLeader()).toBe(true)
    expect(await memory.sync.status('user')).toBe('synced')
    expect(started).toEqual(['ws://relay.test', 'token:tok-1'])
    const statuses: string[] = []
    let heard!: () => void
    const offline = new Promise<void>((resolve) => {
      heard = resolve
    })
    const off = await memory.sync.onStatus((p, s) => {
      statuses.push(`${p}:${s}`)
      heard()
    })
    for (const l of listeners) l('user', 'offline')
    await offline
    expect(statuses).toEqual(['user:offline'])
    await off()
    await memory.close()
    expect(closedSync).toBe(1)
  })

  it("shows the leading tab's sync status in the other tabs, and whenSynced resolves there", async () => {
    const indexedDB = new IDBFactory()
    const locks = fakeLocks() // one origin: tabs and hosts share its Web Locks (clients hold theirs for their lifetime)
    vi.stubGlobal('navigator', { locks })
    const userId = `tabs${++counter}`
    const engines: Array<{ emit: (p: string, s: SyncStatus) => void; closed: boolean }> = []
    const engineWaiters = new Set<() => void>()
    /** Resolves once `n` engines have started. */
    const enginesStarted = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (engines.length >= n) {
            engineWaiters.delete(check)
            resolve()
          }
        }
        engineWaiters.add(check)
        check()
      })
    const fake: StartSync = () => {
      const listeners = new Set<(p: string, s: SyncStatus) => void>()
      const statuses = new Map<string, SyncStatus>()
      const engine = {
        closed: false,
        emit: (p: string, s: SyncStatus) => {
          statuses.set(p, s)
          for (const l of listeners) l(p, s)
        },
      }
      engines.push(engine)
      for (const check of [...engineWaiters]) check()
      return {
        status: (p) => statuses.get(p) ?? 'off',
        onStatus: (l) => {
          listeners.add(l)
          return () => listeners.delete(l)
        },
        flush: () => {},
        close: () => {
          engine.closed = true
        },
      }
    }
    const tab = async () => {
      const { port1, port2 } = new MessageChannel()
      exposeMemory({ endpoint: port1, memory: { indexedDB, IDBKeyRange }, locks, startSync: fake })
      return connectMemory(port2, { appId: 'worker-test', userId, sync: { url: 'ws://relay.test', token: () => 't' } })
    }
    const leader = await tab()
    await enginesStarted(1)
    engines[0]!.emit('user', 'connecting')
    const follower = await tab()
    // A tab that joins late gets the current statuses from the leader.
    await syncState(follower, 'user', 'connecting')
    expect([await leader.sync.isLeader(), await follower.sync.isLeader()]).toEqual([true, false])
    expect(engines).toHaveLength(1)
    const seen: string[] = []
    let heardBoth!: () => void
    const both = new Promise<void>((resolve) => {
      heardBoth = resolve
    })
    await follower.sync.onStatus((p, s) => {
      if (seen.push(`${p}:${s}`) === 2) heardBoth()
    })
    const synced = follower.sync.whenSynced('user')
    engines[0]!.emit('user', 'synced')
    await synced
    expect(await follower.sync.status('user')).toBe('synced')
    engines[0]!.emit('user', 'offline')
    await both
    expect(seen).toEqual(['user:synced', 'user:offline'])
    // The leader leaves: the follower takes over and reports its own engine's statuses.
    await leader.close()
    await enginesStarted(2)
    await leadership(follower, true)
    expect(engines[0]!.closed).toBe(true)
    expect(await follower.sync.isLeader()).toBe(true)
    expect(await follower.sync.status('user')).toBe('off')
    engines[1]!.emit('user', 'synced')
    expect(await follower.sync.status('user')).toBe('synced')
    await follower.close()
  })

  it('whenSynced refuses a store connected without the sync option', async () => {
    const { connect } = pair()
    const memory = await connect()
    const error = await memory.sync.whenSynced('user').catch((e: unknown) => e)
    expect((error as MemoryError).code).toBe('invalid_input')
    await memory.close()
  })
})
