import type { Page } from 'playwright-core'
import type { TestRelay } from '../../../packages/sync/test/relay.js'
import type {} from '../pages/sync-harness.js'
import { launchProfile, type PageServer, type Profile } from './pages.js'

/**
 * Devices of one user for the sync end-to-end tests: a Chromium profile that
 * gets its relay tokens from the test relay, and the sync harness page opened
 * in it with real sync through that relay.
 */
export function syncDevices(label: string, userId: string, relay: () => TestRelay, server: () => PageServer) {
  return {
    async device(): Promise<Profile> {
      const profile = await launchProfile(label)
      await profile.context.exposeFunction('relayToken', () => relay().token(userId))
      return profile
    },
    /** Opens the sync page in `profile`; with `skewMs` its worker's clock is that far off. */
    async open(profile: Profile, options: { skewMs?: number } = {}): Promise<Page> {
      const page = await server().open(profile, 'sync')
      await page.evaluate(
        ([u, url, skewMs]) => window.syncHarness.open(u as string, url as string, { skewMs: skewMs as number }),
        [userId, relay().url, options.skewMs ?? 0],
      )
      return page
    },
  }
}
