import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startTestRelay, type TestRelay } from '../../packages/sync/test/relay.js'
import { startPageServer, type PageServer, type Profile } from './support/pages.js'
import { syncDevices } from './support/sync-devices.js'

/**
 * Two devices of one user (two Chromium profiles), each a page on the ready
 * worker host with the `sync` option, syncing project `user` through the real
 * relay on 127.0.0.1. The tests run in order and share the devices.
 */
const userId = `sync-e2e-${Date.now().toString(36)}`
let relay: TestRelay
let server: PageServer
let deviceA: Profile
let deviceB: Profile
let a: Page
let b: Page

const { device, open } = syncDevices(
  'sync',
  userId,
  () => relay,
  () => server,
)

const waitForStatus = (page: Page, status: string, timeout: number) =>
  page.waitForFunction((s) => window.syncHarness.current() === s, status, { polling: 50, timeout })

const factOn = (page: Page, key: string) => page.evaluate(async (k) => (await window.syncHarness.memory().facts.get('user', k))?.value, key)

beforeAll(async () => {
  ;[relay, server] = await Promise.all([startTestRelay(), startPageServer()])
  ;[deviceA, deviceB] = await Promise.all([device(), device()])
  a = await open(deviceA)
  b = await open(deviceB)
})

afterAll(async () => {
  await Promise.allSettled([deviceA?.close(), deviceB?.close()])
  await Promise.allSettled([server?.close(), relay?.stop()])
})

describe('sync between two Chromium devices through the relay', () => {
  it("carries a fact written on A into B's store within 2 seconds", async () => {
    await Promise.all([
      a.evaluate(() => window.syncHarness.memory().sync.whenSynced('user')),
      b.evaluate(() => window.syncHarness.memory().sync.whenSynced('user')),
    ])
    expect(await a.evaluate(() => window.syncHarness.memory().sync.isLeader())).toBe(true)
    await a.evaluate(() => window.syncHarness.memory().facts.set('user', 'city', 'Lisbon'))
    const t0 = Date.now()
    await b.waitForFunction(async () => (await window.syncHarness.memory().facts.get('user', 'city'))?.value === 'Lisbon', undefined, {
      polling: 20,
      timeout: 2_000,
    })
    const elapsed = Date.now() - t0
    expect(elapsed).toBeLessThan(2_000)
    // Each browser holds one socket to the relay, its multiplexed one.
    const metrics = await (await fetch(`${relay.url.replace('ws://', 'http://')}/metrics`)).text()
    expect(metrics).toMatch(/^engram_relay_mux_connections 2$/m)
    expect(metrics).toMatch(/^engram_relay_connections 2$/m)
  })

  it('reports offline on B within a few seconds of the browser going offline', async () => {
    await deviceB.context.setOffline(true)
    const t0 = Date.now()
    await waitForStatus(b, 'offline', 5_000)
    expect(Date.now() - t0).toBeLessThan(5_000)
    expect(await b.evaluate(() => window.syncHarness.memory().sync.status('user'))).toBe('offline')
  })

  it('converges on the newest edit per key after both edited while B was offline', async () => {
    // k1: B edits first (older), A later (newer). k2: A first (older), B later (newer).
    await b.evaluate(() => window.syncHarness.memory().facts.set('user', 'k1', 'B, older'))
    await a.evaluate(() => window.syncHarness.memory().facts.set('user', 'k2', 'A, older'))
    await new Promise((r) => setTimeout(r, 20))
    await a.evaluate(() => window.syncHarness.memory().facts.set('user', 'k1', 'A, newer'))
    await b.evaluate(() => window.syncHarness.memory().facts.set('user', 'k2', 'B, newer'))
    await new Promise((r) => setTimeout(r, 300))
    expect(await factOn(b, 'k1')).toBe('B, older') // really apart
    await deviceB.context.setOffline(false)
    await waitForStatus(b, 'synced', 10_000)
    const converged = async (page: Page) =>
      page.waitForFunction(
        async () => {
          const m = window.syncHarness.memory()
          return (await m.facts.get('user', 'k1'))?.value === 'A, newer' && (await m.facts.get('user', 'k2'))?.value === 'B, newer'
        },
        undefined,
        { polling: 50, timeout: 10_000 },
      )
    await Promise.all([converged(a), converged(b)])
    for (const page of [a, b]) {
      expect(await factOn(page, 'k1')).toBe('A, newer')
      expect(await factOn(page, 'k2')).toBe('B, newer')
    }
  })

  it("shows the leader's 'synced' in a second tab of device A (a follower)", async () => {
    const second = await open(deviceA)
    expect(await second.evaluate(() => window.syncHarness.memory().sync.isLeader())).toBe(false)
    await second.evaluate(() => window.syncHarness.memory().sync.whenSynced('user'))
    expect(await second.evaluate(() => window.syncHarness.memory().sync.status('user'))).toBe('synced')
    expect(await second.evaluate(() => window.syncHarness.current())).toBe('synced')
    // And it sees what sync writes (through the change relay between the tabs' workers).
    await b.evaluate(() => window.syncHarness.memory().facts.set('user', 'from-b', 'hi'))
    await second.waitForFunction(async () => (await window.syncHarness.memory().facts.get('user', 'from-b'))?.value === 'hi', undefined, {
      polling: 50,
      timeout: 5_000,
    })
    // onStatus in the follower follows the leader: device A offline and back.
    await deviceA.context.setOffline(true)
    await waitForStatus(second, 'offline', 5_000)
    await deviceA.context.setOffline(false)
    await waitForStatus(second, 'synced', 10_000)
    expect(await second.evaluate(() => window.syncHarness.statuses.slice(-3))).toEqual(['offline', 'connecting', 'synced'])
  })
})
