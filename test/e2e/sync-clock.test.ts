import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startTestRelay, type TestRelay } from '../../packages/sync/test/relay.js'
import { startPageServer, type PageServer, type Profile } from './support/pages.js'
import { syncDevices } from './support/sync-devices.js'

/**
 * Issue 28: two devices of one user (two Chromium profiles) through the real relay, one with its
 * clock 10 minutes fast (the worker's `now`). Each learns its clock's offset from the relay, so the
 * edit made later in real time wins on both, whichever device made it; the fast one says so.
 */
const userId = `sync-clock-e2e-${Date.now().toString(36)}`
const TEN_MINUTES = 10 * 60_000
let relay: TestRelay
let server: PageServer
let fastDevice: Profile
let rightDevice: Profile
let fast: Page
let right: Page

const { device, open } = syncDevices(
  'sync-clock',
  userId,
  () => relay,
  () => server,
)

const set = (page: Page, key: string, value: string) => page.evaluate(([k, v]) => window.syncHarness.memory().facts.set('user', k!, v!), [key, value])
const valueOn = (page: Page, key: string) => page.evaluate(async (k) => (await window.syncHarness.memory().facts.get('user', k))?.value, key)
const arrives = (page: Page, key: string, value: string) =>
  page.waitForFunction(async ([k, v]) => (await window.syncHarness.memory().facts.get('user', k!))?.value === v, [key, value], { polling: 20, timeout: 10_000 })

beforeAll(async () => {
  ;[relay, server] = await Promise.all([startTestRelay(), startPageServer()])
  ;[fastDevice, rightDevice] = await Promise.all([device(), device()])
  fast = await open(fastDevice, { skewMs: TEN_MINUTES })
  right = await open(rightDevice)
  await Promise.all([fast, right].map((p) => p.evaluate(() => window.syncHarness.memory().sync.whenSynced('user'))))
}, 120_000)

afterAll(async () => {
  await Promise.allSettled([fastDevice?.close(), rightDevice?.close()])
  await Promise.allSettled([server?.close(), relay?.stop()])
})

describe('a device with its clock 10 minutes fast', () => {
  it('shows the clock warning in memory.status; the device with a right clock does not', async () => {
    const warnings = await fast.evaluate(async () => (await window.syncHarness.memory().status.get()).warnings)
    expect(warnings).toEqual([expect.objectContaining({ type: 'clock' })])
    const [clock] = warnings
    expect(clock!.message).toMatch(/10 minutes fast/)
    expect(clock!.type === 'clock' && clock!.offsetMs).toBeLessThan(-9 * 60_000)
    expect(await right.evaluate(async () => (await window.syncHarness.memory().status.get()).warnings)).toEqual([])
  })

  it('both converge on the later edit in real time, whichever device made it', async () => {
    // k1: the fast device first, the right one later. k2: the right device first, the fast one later.
    await set(fast, 'k1', 'fast, earlier')
    await arrives(right, 'k1', 'fast, earlier')
    await set(right, 'k1', 'right, later')
    await set(right, 'k2', 'right, earlier')
    await arrives(fast, 'k2', 'right, earlier')
    await set(fast, 'k2', 'fast, later')
    await Promise.all([arrives(fast, 'k1', 'right, later'), arrives(right, 'k2', 'fast, later')])
    for (const page of [fast, right]) {
      expect(await valueOn(page, 'k1')).toBe('right, later')
      expect(await valueOn(page, 'k2')).toBe('fast, later')
      // Nothing was set aside or looks suspicious: the fast device stamps with the relay's time.
      expect(await page.evaluate(async () => (await window.syncHarness.memory().sync.details('user')).problems)).toEqual([])
      expect(await page.evaluate(() => window.syncHarness.memory().sync.status('user'))).toBe('synced')
    }
  })
})
