import { compareHlc, readHlc } from '@engram/core'
import { replicationOf } from '@engram/core/internal'
import 'fake-indexeddb/auto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import type { SyncStatus } from '@engram/sync'
import { closeAll, openReplica, type Replica } from '../test/replicas.js'
import { startTestRelay, type TestRelay } from '../test/relay.js'

let relay: TestRelay
beforeAll(async () => {
  relay = await startTestRelay()
}, 60_000)
afterAll(async () => {
  await relay?.stop()
})

const MIN = 60_000

/** Resolves when `check` holds; it is tried again on every status change of the replica and after each write it makes. */
async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** A device on the real relay, its clock `skew` off the real time (the relay's). */
function device(name: string, userId: string, options: { skew?: number; scope?: string; network?: EventTarget } = {}): Promise<Replica> {
  return openReplica(name, undefined, {
    userId,
    url: relay.url,
    token: () => relay.token(userId, 3600, options.scope),
    WebSocket,
    start: Date.now() + (options.skew ?? 0),
    backoff: { initialMs: 40, maxMs: 200 },
    ...(options.network ? { network: options.network } : {}),
  })
}

const statusesOf = (replica: Replica): SyncStatus[] => {
  const seen: SyncStatus[] = []
  replica.sync.onStatus((projectId, status) => {
    if (projectId === 'p') seen.push(status)
  })
  return seen
}

/** Issue 28, failure 4: no failure hides behind `synced`. */
describe('status tells the truth, through the real relay', () => {
  it('a session document the relay refuses (room name too long, 4404) keeps the project in error; the next synced of the project does not hide it', async () => {
    const network = new EventTarget()
    const a = await device('a', 'u-refused', { network })
    const b = await device('b', 'u-refused')
    try {
      await a.memory.projects.setSync('p', { messages: true })
      await a.sync.whenSynced('p')
      const s = await a.memory.sessions.create('p', { id: 's'.repeat(510) })
      await a.memory.messages.append(s.id, { role: 'user', content: 'never reaches the relay' })
      await until(() => a.sync.status('p') === 'error', 'project in error')
      expect(a.sync.details('p')).toMatchObject({ status: 'error', reason: 'refused' })
      expect(a.sync.details('p').message).toMatch(/4404/)
      // The project document goes offline and syncs again (the refused one does not retry): the project still says what is wrong.
      const seen = statusesOf(a)
      network.dispatchEvent(new Event('offline'))
      network.dispatchEvent(new Event('online'))
      await a.memory.facts.set('p', 'k', 'v')
      await until(async () => (await b.memory.facts.get('p', 'k'))?.value === 'v', 'the project document synced again')
      expect(seen).not.toContain('synced')
      expect(a.sync.status('p')).toBe('error')
      expect(await a.memory.sync.status('p')).toBe('error')
      expect((await a.memory.status.get()).sync).toMatchObject({ state: 'failing', projects: { p: 'error' } })
    } finally {
      await closeAll([a, b])
    }
  }, 60_000)

  it('a read-only token: the relay drops the writes, the writer shows read_only with its pending writes, never synced', async () => {
    const writer = await device('w', 'u-viewer', { scope: 'read' })
    const other = await device('o', 'u-viewer')
    try {
      await Promise.all([writer.sync.whenSynced('p'), other.sync.whenSynced('p')]) // nothing to send yet: the relay holds all it has
      const seen = statusesOf(writer)
      await writer.memory.facts.set('p', 'k', 'from a read-only token')
      await until(() => writer.sync.status('p') === 'read_only', 'read_only')
      expect(writer.sync.details('p')).toMatchObject({ status: 'read_only', reason: 'read_only' })
      expect(writer.sync.details('p').message).toMatch(/read-only/)
      expect(await writer.memory.sync.status('p')).toBe('read_only')
      expect((await writer.memory.status.get()).sync.projects).toEqual({ p: 'read_only' })
      // It still receives: the other device's write arrives, and nothing of its own reached the relay.
      await other.memory.facts.set('p', 'from-other', 1)
      await until(async () => (await writer.memory.facts.get('p', 'from-other'))?.value === 1, 'the viewer receives')
      expect(await other.memory.facts.get('p', 'k')).toBeUndefined()
      expect(writer.sync.status('p')).toBe('read_only')
      expect(seen).not.toContain('synced')
      // After a restart too.
      await writer.restart()
      await until(() => writer.sync.status('p') === 'read_only', 'read_only after a restart')
    } finally {
      await closeAll([writer, other])
    }
  }, 60_000)
})

/** Issue 28: each device learns its clock's offset from the relay, so the edit made later in real time wins. */
describe("clocks learn the relay's time", () => {
  it('a device 10 minutes fast stamps with the relay time, shows a clock warning, and the later edit in real time wins on both', async () => {
    const userId = 'u-clock'
    const fast = await device('fast', userId, { skew: 10 * MIN })
    const right = await device('right', userId)
    try {
      // Offline first: an edit made before it ever reached the relay waits, and is stamped again when it does.
      await Promise.all([fast.sync.whenSynced('p'), right.sync.whenSynced('p')])
      expect(replicationOf(fast.memory).clockOffset()).toBeLessThan(-9 * MIN)
      const warnings = (await fast.memory.status.get()).warnings
      expect(warnings).toEqual([expect.objectContaining({ type: 'clock' })])
      expect(warnings[0]!.message).toMatch(/10 minutes fast/)
      expect((await right.memory.status.get()).warnings).toEqual([])

      await fast.memory.facts.set('p', 'k', 'from fast, first')
      await until(async () => (await right.memory.facts.get('p', 'k'))?.value === 'from fast, first', 'first edit arrives')
      const stamp = (await replicationOf(right.memory).snapshot('p')).records.find((r) => r.row.key === 'k')!.hlc
      expect(Math.abs(readHlc(stamp)!.physical - Date.now())).toBeLessThan(MIN) // relay time, not 10 minutes ahead
      expect(right.sync.details('p').problems).toEqual([]) // nothing suspicious

      right.clock.advance(5) // a little later in real time
      await right.memory.facts.set('p', 'k', 'from right, later')
      await until(async () => (await fast.memory.facts.get('p', 'k'))?.value === 'from right, later', 'the later edit wins on fast')
      expect((await right.memory.facts.get('p', 'k'))?.value).toBe('from right, later')
      const [a, b] = await Promise.all(
        [fast, right].map(async (r) => (await replicationOf(r.memory).snapshot('p')).records.find((x) => x.row.key === 'k')!.hlc),
      )
      expect(compareHlc(a, b)).toBe(0)
    } finally {
      await closeAll([fast, right])
    }
  }, 60_000)
})
