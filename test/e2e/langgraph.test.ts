import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { launchProfile, startPageServer, type PageServer, type Profile } from './support/pages.js'
import type {} from './pages/langgraph-protocol.js'

let server: PageServer
let profile: Profile | undefined

beforeAll(async () => {
  server = await startPageServer()
})
afterAll(async () => {
  await server?.close()
})
afterEach(async () => {
  await profile?.close()
  profile = undefined
})

describe('@engram/langgraph in Chromium', () => {
  it('pauses a graph for approval in a worker, survives a page reload, and resumes from IndexedDB', async () => {
    profile = await launchProfile('langgraph')
    const page = await server.open(profile, 'langgraph')
    const ids = { userId: `u-${Date.now().toString(36)}`, threadId: 'approval-1' }

    const paused = await page.evaluate((a) => window.graph.call('start', { ...a, request: 'ship v2' }), ids)
    expect(paused).toEqual({ values: { request: 'ship v2', log: ['planned: ship v2'] }, next: ['approve'], question: 'Approve the plan?' })

    // The reload ends the page and its worker: only IndexedDB remains.
    await page.reload()
    await page.waitForFunction(() => document.title === 'ready')
    const restored = await page.evaluate((a) => window.graph.call('state', a), ids)
    expect(restored).toEqual(paused)

    const done = await page.evaluate((a) => window.graph.call('resume', { ...a, approved: true }), ids)
    expect(done).toEqual({ values: { request: 'ship v2', approved: true, log: ['planned: ship v2', 'asked', 'acted'] }, next: [] })
  })
})
