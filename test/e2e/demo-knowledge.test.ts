import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchProfile, type Profile } from './support/chromium.js'
import { openDemoPage, type DemoPage } from './demo-support/demo-page.js'
import { startDemoStack, type DemoStack } from './demo-support/stack.js'

const DAY = 86_400_000
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)

describe('demo: the knowledge graph with a time slider', () => {
  let stack: DemoStack
  let profile: Profile
  let demo: DemoPage

  beforeAll(async () => {
    stack = await startDemoStack()
    profile = await launchProfile('demo-knowledge')
    const page = profile.context.pages()[0] ?? (await profile.context.newPage())
    await page.setViewportSize({ width: 1280, height: 900 })
    demo = await openDemoPage(page, stack.url, 'A', `e2e-k-${Date.now().toString(36)}`)
  })

  afterAll(async () => {
    await profile?.close()
    await stack?.close()
  })

  it('records relations, draws the neighbourhood, and shows what was true at the slider’s time', async () => {
    const panel = demo.page.locator('#knowledge')
    const record = async (s: string, p: string, o: string, from: number) => {
      await panel.getByLabel('Subject', { exact: true }).fill(s)
      await panel.getByLabel('Predicate', { exact: true }).fill(p)
      await panel.getByLabel('Object', { exact: true }).fill(o)
      await panel.getByLabel('Valid from').fill(day(from))
      await panel.getByRole('button', { name: 'Record' }).click()
      // The form clears once the relation is stored: wait for it before filling it again.
      await expect.poll(() => panel.getByLabel('Subject', { exact: true }).inputValue(), { timeout: 10_000 }).toBe('')
    }
    const now = Date.now()
    await record('Dana', 'works_at', 'Acme', now - 200 * DAY)
    await expect.poll(() => panel.locator('ul.relations li').allTextContents(), { timeout: 10_000 }).toEqual([expect.stringContaining('Dana works_at Acme')])
    await record('Dana', 'works_at', 'Initech', now - 100 * DAY)
    await record('Acme', 'based_in', 'Lyon', now - 300 * DAY)
    await expect.poll(() => panel.locator('.hint').first().textContent(), { timeout: 10_000 }).toBe('4 entities, 3 relations')
    await panel.getByLabel('Entity', { exact: true }).selectOption({ label: 'Dana (thing)' })
    // Now: Dana works at Initech (Acme was closed when Initech began); the picture shows Dana and Initech.
    await expect.poll(() => panel.locator('ul.relations li span').allTextContents(), { timeout: 10_000 }).toEqual(['Dana works_at Initech'])
    expect(await panel.locator('svg.graph .node-label').allTextContents()).toEqual(expect.arrayContaining(['Dana', 'Initech']))
    // Back in time, halfway from the oldest relation to now: Dana worked at Acme, and two hops out, Acme was in Lyon.
    const at = 50
    await panel.getByLabel('As of').evaluate((input, value) => {
      ;(input as HTMLInputElement).value = String(value)
      input.dispatchEvent(new Event('input', { bubbles: true }))
    }, at)
    await expect
      .poll(() => panel.locator('ul.relations li span').allTextContents(), { timeout: 10_000 })
      .toEqual(expect.arrayContaining(['Dana works_at Acme', 'Acme based_in Lyon']))
    expect(await panel.locator('ul.relations li span').allTextContents()).not.toContain('Dana works_at Initech')
    expect(await panel.locator('svg.graph .node-label').allTextContents()).toEqual(expect.arrayContaining(['Dana', 'Acme', 'Lyon']))
    // The search panel finds the graph too: Initech as an entity, and the relation that names it.
    const search = demo.page.locator('#search')
    await search.getByLabel('Search memory').fill('Initech')
    await search.getByRole('button', { name: 'Search' }).click()
    await expect.poll(() => search.locator('.hit-group[data-kind="entity"] .hit').count(), { timeout: 10_000 }).toBeGreaterThan(0)
    expect(await search.locator('.hit-group[data-kind="relation"]').textContent()).toContain('Dana works at Initech')
    expect(demo.errors).toEqual([])
    expect(demo.consoleErrors).toEqual([])
  })

  it('forms entities and relations from the chat: the extractor relates "Sam works at Globex", and a later job closes it', async () => {
    const chat = demo.page.locator('#chat')
    const panel = demo.page.locator('#knowledge')
    const say = async (text: string): Promise<void> => {
      const before = await chat.locator('.transcript .role-assistant').count()
      await chat.getByLabel('Message', { exact: true }).fill(text)
      await chat.getByLabel('Message', { exact: true }).press('Enter')
      await expect.poll(() => chat.locator('.transcript .role-assistant').count(), { timeout: 10_000 }).toBe(before + 1)
    }
    // The slider back at "now" (the test before moved it into the past).
    await panel.getByLabel('As of').evaluate((input) => {
      ;(input as HTMLInputElement).value = '100'
      input.dispatchEvent(new Event('input', { bubbles: true }))
    })
    await say('Sam works at Globex.')
    expect(await chat.locator('.transcript .role-assistant').last().textContent()).toContain('Noted: Sam works at Globex')
    // The background extractor's job writes Sam (a person), Globex and the relation; the panel follows the change feed.
    const sam = async () => (await panel.getByLabel('Entity', { exact: true }).locator('option').allTextContents()).includes('Sam (person)')
    await expect.poll(sam, { timeout: 15_000 }).toBe(true)
    await panel.getByLabel('Entity', { exact: true }).selectOption({ label: 'Sam (person)' })
    await expect.poll(() => panel.locator('ul.relations li span').allTextContents(), { timeout: 10_000 }).toEqual(['Sam works_at Globex'])
    await say('Sam now works at Hooli.')
    await expect.poll(() => panel.locator('ul.relations li span').allTextContents(), { timeout: 15_000 }).toEqual(['Sam works_at Hooli'])
    expect(demo.errors).toEqual([])
    expect(demo.consoleErrors).toEqual([])
  })
})
