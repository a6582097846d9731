import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type {} from './pages/extraction-page.js'
import { launchProfile, type PageServer, type Profile, startPageServer } from './support/pages.js'

let server: PageServer | undefined
let profiles: Profile[] = []
let users = 0
const user = (): string => `x${++users}-${Date.now().toString(36)}`

beforeAll(async () => {
  server = await startPageServer()
})
afterAll(async () => {
  await server?.close()
})
afterEach(async () => {
  await Promise.all(profiles.map((p) => p.close()))
  profiles = []
})
async function tab() {
  const profile = await launchProfile('extraction')
  profiles.push(profile)
  return { profile, page: await server!.open(profile, 'extraction') }
}

describe('aiExtractor through the worker in Chromium', () => {
  it('the model runs in the page, the queue and the writes in the worker: Lisbon then Porto is one fact with both in its history', async () => {
    const { page } = await tab()
    const result = await page.evaluate(async (u) => {
      await window.extraction.open(u)
      const m = window.extraction.memory()
      const jobs = await window.extraction.turns('s1', [
        ['I live in Lisbon.', 'Nice city.'],
        ['I moved to Porto last month.', 'Congratulations on the move.'],
        ['We have a cat called Biscuit.', 'Biscuit sounds lovely.'],
      ])
      await m.extraction.flush()
      const facts = (await m.facts.list('p')).items.map((f) => [f.key, f.value])
      const history = await m.facts.history('p', 'home city')
      const observations = await m.observations.list('s1', { all: true })
      const status = await m.status.get()
      return {
        jobs,
        facts,
        history: history.map((v) => [v.value, v.source?.messageIds?.length ?? 0]),
        calls: window.extraction.calls().length,
        usage: (await m.usage.project('p')).calls,
        observations: observations.map((o) => [o.generation, o.text]),
        extractor: { state: status.extractor.state, queue: status.extractor.queue },
      }
    }, user())
    expect(result.jobs.every((id) => typeof id === 'number')).toBe(true)
    expect(result.facts).toEqual([['home city', 'Porto']])
    expect(result.history).toEqual([
      ['Lisbon', 2],
      ['Porto', 2],
    ])
    expect(result.calls).toBeGreaterThanOrEqual(3)
    expect(result.usage).toBe(result.calls)
    expect(result.observations.length).toBeGreaterThan(0)
    expect(result.extractor).toEqual({ state: 'ok', queue: { backlog: 0, failed: 0 } })
  })

  it('a reload while a job is in flight resumes the queue in order in the reloaded tab (real IndexedDB)', async () => {
    const { page } = await tab()
    const u = user()
    await page.evaluate(async (id) => {
      await window.extraction.open(id, { stuck: true })
      await window.extraction.turns('s1', [
        ['I live in Lisbon.', 'Ok.'],
        ['I moved to Porto.', 'Ok.'],
        ['I moved to Faro.', 'Ok.'],
      ])
    }, u)
    // The first job is in flight in the model when the tab reloads.
    await page.waitForFunction(() => window.extraction.calls().length === 1)
    await page.reload()
    await page.waitForFunction(() => document.title === 'ready')
    const after = await page.evaluate(async (id) => {
      await window.extraction.open(id)
      const m = window.extraction.memory()
      await m.extraction.flush()
      return {
        order: window.extraction.calls().flatMap((c) => /(?:live in|moved to) (\w+)/.exec(c.prompt.slice(c.prompt.indexOf('<exchange>')))?.[1] ?? []),
        history: (await m.facts.history('p', 'home city')).map((v) => v.value),
      }
    }, u)
    expect(after.order).toEqual(['Lisbon', 'Porto', 'Faro'])
    expect(after.history).toEqual(['Lisbon', 'Porto', 'Faro'])
  })
})
