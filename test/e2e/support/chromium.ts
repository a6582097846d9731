import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'

/** The Chromium the e2e tests drive: Debian's, or `ENGRAM_CHROMIUM`. */
export const chromiumPath = process.env.ENGRAM_CHROMIUM ?? '/usr/bin/chromium'

/** Headless flags for a quiet, offline-friendly Chromium (documented in docs/worker.md, "Testing in a real browser"). */
export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** One browser profile: a "device" with its own IndexedDB, removed by `close()`. */
export interface Profile {
  readonly context: BrowserContext
  readonly dir: string
  close(): Promise<void>
}

/**
 * Launches Chromium with a fresh user-data-dir. Two profiles are two devices.
 * @throws Error when Chromium is missing: browser tests fail, they never skip.
 */
export async function launchProfile(name = 'device'): Promise<Profile> {
  if (!existsSync(chromiumPath)) {
    throw new Error(`Chromium not found at ${chromiumPath}: install it (apt-get install -y chromium) or set ENGRAM_CHROMIUM`)
  }
  const dir = await mkdtemp(join(tmpdir(), `engram-${name}-`))
  const context = await chromium.launchPersistentContext(dir, { executablePath: chromiumPath, headless: true, args: chromiumArgs })
  return {
    context,
    dir,
    async close() {
      await context.close().catch(() => {})
      await rm(dir, { recursive: true, force: true })
    },
  }
}
