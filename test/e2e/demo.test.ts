import { mkdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchProfile, type Profile } from './support/chromium.js'
import { openDemoPage, type DemoPage } from './demo-support/demo-page.js'
import { startDemoStack, type DemoStack } from './demo-support/stack.js'

const artifacts = fileURLToPath(new URL('../../test-results/', import.meta.url))
const hostile = '<img src=x onerror=alert(1)>'

describe('demo: two devices of one user, syncing through the relay', () => {
  let stack: DemoStack
  let profileA: Profile
  let profileB: Profile
  let contextA: BrowserContext
  let contextB: BrowserContext
  let a: DemoPage
  let b: DemoPage
  const user = `e2e-${Date.now().toString(36)}`

  beforeAll(async () => {
    await mkdir(artifacts, { recursive: true })
    stack = await startDemoStack()
    profileA = await launchProfile('demo-A')
    profileB = await launchProfile('demo-B')
    contextA = profileA.context
    contextB = profileB.context
    for (const context of [contextA, contextB]) await context.pages()[0]?.setViewportSize({ width: 1280, height: 900 })
    a = await openDemoPage(contextA.pages()[0] ?? await contextA.newPage(), stack.url, 'A', user)
    b = await openDemoPage(contextB.pages()[0] ?? await contextB.newPage(), stack.url, 'B', user)
  })

  afterAll(async () => {
    await Promise.allSettled([profileA?.close(), profileB?.close()])
    await stack?.close()
  })

  it('shows a fact written on device A on device B within 2 seconds', async () => {
    await a.waitForSync('synced', 20_000)
    await b.waitForSync('synced', 20_000)
    const started = Date.now()
    await a.setFact('city', 'Lisbon')
    await b.waitForFact('city', 'Lisbon', 2_000)
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it('renders a hostile fact value as text on both devices', async () => {
    await a.setFact('note', hostile)
    await b.waitForFact('note', hostile, 2_000)
    for (const device of [a, b]) {
      expect(await device.factValue('note')).toBe(hostile)
      expect(await device.page.locator('#app img').count()).toBe(0)
      expect(device.dialogs).toEqual([])
    }
  })

  it('converges after B was offline and both edited: the newest edit per key wins', async () => {
    await contextB.setOffline(true)
    try {
      await expect.poll(() => b.page.evaluate(() => navigator.onLine)).toBe(false)
      await b.waitForSync('offline', 10_000)
      await a.setFact('color', 'red')
      await a.setFact('only_a', 'from A')
      await new Promise(resolve => setTimeout(resolve, 20))
      await b.setFact('color', 'blue')
      await b.setFact('only_b', 'from B')
      // B really is cut off: neither sees the other's write.
      await new Promise(resolve => setTimeout(resolve, 1_000))
      expect(await a.factValue('only_b')).toBeUndefined()
      expect(await b.factValue('only_a')).toBeUndefined()
      expect(await b.factValue('color')).toBe('blue')
      expect(await a.factValue('color')).toBe('red')
    } finally {
      await contextB.setOffline(false)
    }
    for (const device of [a, b]) {
      await device.waitForFact('color', 'blue', 15_000)
      await device.waitForFact('only_a', 'from A', 15_000)
      await device.waitForFact('only_b', 'from B', 15_000)
    }
    await b.waitForSync('synced', 15_000)
  })

  it('chats: turns.begin shows the context, the extractor writes facts that sync', async () => {
    const chat = a.page.locator('#chat')
    const say = async (text: string): Promise<void> => {
      const before = await chat.locator('.transcript .role-assistant').count()
      await chat.getByLabel('Message', { exact: true }).fill(text)
      await chat.getByLabel('Message', { exact: true }).press('Enter')
      await expect.poll(() => chat.locator('.transcript .role-assistant').count(), { timeout: 10_000 }).toBe(before + 1)
    }
    await say('Remember that my favourite colour is teal.')
    await a.waitForFact('favourite_colour', 'teal')
    await b.waitForFact('favourite_colour', 'teal', 5_000)
    await say(`Remember that the payload is ${hostile}`)
    await say('What is my favourite colour?')
    await expect.poll(() => chat.locator('.transcript .role-assistant').last().textContent()).toContain('teal')
    expect(await chat.locator('.transcript .role-user').filter({ hasText: hostile }).count()).toBe(1)
    expect(await a.factValue('payload')).toBe(hostile)
    expect(await a.page.locator('#app img').count()).toBe(0)
    expect(a.dialogs).toEqual([])
    // The context preview shows the last turn's context, a bar per section.
    await expect.poll(() => a.page.locator('#context .context-section').count()).toBeGreaterThan(0)

    await a.page.locator('#context').scrollIntoViewIfNeeded()
    await a.page.screenshot({ path: `${artifacts}demo-page-A.png`, fullPage: true })
    await a.page.locator('#inspector').screenshot({ path: `${artifacts}demo-inspector.png` })
    await chat.screenshot({ path: `${artifacts}demo-chat.png` })
    await b.page.screenshot({ path: `${artifacts}demo-page-B.png`, fullPage: true })
  })

  it('reloads B with the relay stopped and shows the same memory (offline first)', async () => {
    const expected = { city: 'Lisbon', note: hostile, color: 'blue', only_a: 'from A', only_b: 'from B', favourite_colour: 'teal' }
    await stack.stopRelay()
    try {
      await b.page.reload()
      await b.page.locator('#facts tbody tr').first().waitFor({ timeout: 20_000 })
      for (const [key, value] of Object.entries(expected)) await b.waitForFact(key, value)
      expect(await b.page.locator('#current-sync').textContent()).not.toBe('synced')
      expect(b.errors).toEqual([])
      expect(b.dialogs).toEqual([])
    } finally {
      await stack.startRelay()
    }
  })
})
