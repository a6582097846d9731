import { afterAll, afterEach, beforeAll } from 'vitest'
import type { Page } from 'playwright-core'
import { launchProfile, startPageServer, type PageServer, type Profile } from './pages.js'

/**
 * Registers the hooks of a suite of worker-page tests: one page server for the
 * file, fresh Chromium profiles per test, closed after each test.
 */
export function workerTabs(): { profile(): Promise<Profile>; tab(p: Profile): Promise<Page> } {
  let server: PageServer | undefined
  let profiles: Profile[] = []
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
  return {
    async profile() {
      const p = await launchProfile('worker')
      profiles.push(p)
      return p
    },
    tab: (p) => server!.open(p, 'worker'),
  }
}
