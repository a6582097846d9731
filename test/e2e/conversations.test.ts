import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startTestRelay, type TestRelay } from '../../packages/sync/test/relay.js'
import { startPageServer, type PageServer, type Profile } from './support/pages.js'
import { syncDevices } from './support/sync-devices.js'

/**
 * Conversations across devices: two Chromium profiles of one user, each a page
 * on the worker host with real sync, project `user` with `messages: true`,
 * through the real relay on 127.0.0.1 (real IndexedDB, y-indexeddb, y-websocket).
 */
const userId = `conv-e2e-${Date.now().toString(36)}`
let relay: TestRelay
let server: PageServer
let deviceA: Profile
let deviceB: Profile
let a: Page
let b: Page

const { device, open } = syncDevices(
  'conversations',
  userId,
  () => relay,
  () => server,
)

const tail = (page: Page, sessionId: string): Promise<string[]> =>
  page.evaluate(async (id) => (await window.syncHarness.memory().messages.tail(id, 100)).map((m) => m.content), sessionId)

/** Waits (inside the page, on the store's change feed) until its tail of the session has `count` messages. */
const untilTail = (page: Page, sessionId: string, count: number) =>
  page.evaluate(
    async ([id, n]) => {
      const memory = window.syncHarness.memory()
      const enough = async () => (await memory.sessions.get(id)) !== undefined && (await memory.messages.tail(id, 100)).length === n
      if (await enough()) return
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the session did not reach ${n} messages in 15 s`)), 15_000)
        const off = memory.changes.subscribe({ kinds: ['messages', 'sessions'] }, () => {
          void enough().then(async (done) => {
            if (!done) return
            clearTimeout(timer)
            await (await off)()
            resolve()
          })
        })
      })
    },
    [sessionId, count] as [string, number],
  )

beforeAll(async () => {
  ;[relay, server] = await Promise.all([startTestRelay(), startPageServer()])
  ;[deviceA, deviceB] = await Promise.all([device(), device()])
  a = await open(deviceA)
  b = await open(deviceB)
  for (const page of [a, b]) {
    await page.evaluate(() => window.syncHarness.memory().projects.setSync('user', { messages: true }))
    await page.evaluate(() => window.syncHarness.memory().sync.whenSynced('user'))
  }
})

afterAll(async () => {
  await Promise.allSettled([deviceA?.close(), deviceB?.close()])
  await Promise.allSettled([server?.close(), relay?.stop()])
})

describe('a conversation that follows the user across two Chromium devices', () => {
  let sessionId = ''

  it("shows A's chat on B", async () => {
    sessionId = await a.evaluate(async () => {
      const memory = window.syncHarness.memory()
      const session = await memory.sessions.create('user', { title: 'Bicycle' })
      await memory.messages.appendExchange(session.id, 'Where did I park the bicycle?', 'Behind the library.')
      return session.id
    })
    await untilTail(b, sessionId, 2)
    expect(await tail(b, sessionId)).toEqual(['Where did I park the bicycle?', 'Behind the library.'])
    expect(
      await b.evaluate(
        (id) =>
          window.syncHarness
            .memory()
            .sessions.get(id)
            .then((s) => s?.title),
        sessionId,
      ),
    ).toBe('Bicycle')
    const hits = await b.evaluate(async () => (await window.syncHarness.memory().search('user', 'bicycle')).map((h) => h.kind))
    expect(hits).toContain('message')
  })

  it('continues on B after both wrote offline and B reloaded: every message, one order on both', async () => {
    await Promise.all([deviceA.context.setOffline(true), deviceB.context.setOffline(true)])
    await a.evaluate((id) => window.syncHarness.memory().messages.append(id, { role: 'user', content: 'written on A offline' }), sessionId)
    await b.evaluate((id) => window.syncHarness.memory().messages.append(id, { role: 'user', content: 'written on B offline' }), sessionId)
    await Promise.all([deviceA.context.setOffline(false), deviceB.context.setOffline(false)])
    await b.close()
    b = await open(deviceB)
    await b.evaluate(() => window.syncHarness.memory().sync.whenSynced('user'))
    await untilTail(b, sessionId, 4)
    await untilTail(a, sessionId, 4)
    const onA = await tail(a, sessionId)
    expect(await tail(b, sessionId)).toEqual(onA)
    expect([...onA].sort()).toEqual(['Behind the library.', 'Where did I park the bicycle?', 'written on A offline', 'written on B offline'])
    // B continues the conversation; A sees the reply.
    await b.evaluate((id) => window.syncHarness.memory().messages.append(id, { role: 'assistant', content: 'Continued on B.' }), sessionId)
    await untilTail(a, sessionId, 5)
    expect((await tail(a, sessionId)).at(-1)).toBe('Continued on B.')
  })
})
