import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchProfile, startPageServer, type PageServer } from './support/pages.js'
import type {} from './pages/crash-page.js'

let server: PageServer

beforeAll(async () => {
  server = await startPageServer()
})
afterAll(async () => {
  await server?.close()
})

describe('a worker that ends in the middle of a call', () => {
  it('fails the calls in flight at once with closed, and every later call too', async () => {
    const profile = await launchProfile('worker-crash')
    try {
      const page = await server.open(profile, 'crash')
      const result = await page.evaluate((u) => window.crashTest(u), `u-${Date.now().toString(36)}`)
      expect(result.code).toBe('closed')
      // Without the watch, the call stays pending for ever; close() used to give up after 2 s.
      expect(result.elapsedMs).toBeLessThan(1000)
      expect(result.closed).toBe(true)
      expect(result.after).toBe('closed')
    } finally {
      await profile.close()
    }
  })
})
