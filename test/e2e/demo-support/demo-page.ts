import { expect } from 'vitest'
import type { Page } from 'playwright-core'

/** Drives the demo page of one device. */
export interface DemoPage {
  readonly page: Page
  /** Waits until the page is up and the selected project reports `status`. */
  waitForSync(status: string, timeout?: number): Promise<void>
  setFact(key: string, value: string): Promise<void>
  /** The displayed value of an active fact, or undefined when there is no row. */
  factValue(key: string): Promise<string | undefined>
  waitForFact(key: string, value: string, timeout?: number): Promise<void>
  /** JS dialogs the page opened (an executed `alert` would land here). */
  readonly dialogs: string[]
  /** Uncaught page errors. */
  readonly errors: string[]
  /** Console messages of type error, of the page and its workers (`[worker] ` in front). */
  readonly consoleErrors: string[]
}

/** Opens the demo at `url` as `device` for `user`. */
export async function openDemoPage(page: Page, url: string, device: string, user: string): Promise<DemoPage> {
  const dialogs: string[] = []
  const errors: string[] = []
  const consoleErrors: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${message.worker() ? '[worker] ' : ''}${message.text()}`)
  })
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(`${url}/?device=${device}&user=${user}`)
  await page.locator('#facts').waitFor({ timeout: 20_000 })
  const facts = page.locator('#facts')
  const row = (key: string) => facts.locator(`tbody tr[data-key="${key}"]`)
  return {
    page,
    dialogs,
    errors,
    consoleErrors,
    async waitForSync(status, timeout = 10_000) {
      await expect.poll(() => page.locator('#current-sync').textContent(), { timeout }).toBe(status)
    },
    async setFact(key, value) {
      await facts.getByLabel('Key', { exact: true }).fill(key)
      await facts.getByLabel('Value', { exact: true }).fill(value)
      await facts.getByRole('button', { name: 'Set fact' }).click()
      await row(key).locator('.value').filter({ hasText: value }).first().waitFor({ timeout: 5_000 })
    },
    async factValue(key) {
      const cell = row(key).locator('.value')
      return (await cell.count()) === 0 ? undefined : ((await cell.first().textContent()) ?? undefined)
    },
    async waitForFact(key, value, timeout = 5_000) {
      await expect
        .poll(
          async () => {
            const cell = row(key).locator('.value')
            return (await cell.count()) === 0 ? undefined : await cell.first().textContent()
          },
          { timeout, interval: 25 },
        )
        .toBe(value)
    },
  }
}
