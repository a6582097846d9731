import type { Page } from 'playwright-core'
import { launchProfile, type Profile } from './chromium.js'
import { buildTestPages } from './build-pages.js'
import { serveStatic, type StaticServer } from './static-server.js'

/** The built test pages served on 127.0.0.1, for one test file. */
export interface PageServer {
  readonly origin: string
  /** Opens `<name>.html` in a new tab of `profile` and waits until its script is ready. */
  open(profile: Profile, name: string): Promise<Page>
  close(): Promise<void>
}

/** Builds (or reuses) the test pages and serves them. */
export async function startPageServer(): Promise<PageServer> {
  const root = await buildTestPages()
  const server: StaticServer = await serveStatic(root)
  return {
    origin: server.origin,
    async open(profile, name) {
      const page = await profile.context.newPage()
      const errors: string[] = []
      page.on('pageerror', (e) => errors.push(e.message))
      await page.goto(`${server.origin}/${name}.html`)
      await page
        .waitForFunction(() => document.title === 'ready', undefined, { timeout: 15_000 })
        .catch(() => {
          throw new Error(`${name}.html did not get ready: ${errors.join('; ') || 'no page error'}`)
        })
      return page
    },
    close: () => server.close(),
  }
}

export { launchProfile, type Profile }
