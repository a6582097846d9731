import { mkdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { BrowserContext } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { launchProfile, type Profile } from './support/chromium.js'
import { openDemoPage, type DemoPage } from './demo-support/demo-page.js'
import { startDemoStack, type DemoStack } from './demo-support/stack.js'

const artifacts = fileURLToPath(new URL('../../test-results/', import.meta.url))
const hostile = '<img src=x onerror=alert(1)>'

/** Count labels whose noun disagrees with its number ("1 items", "2 token", "3 item(s)"). */
function ungrammatical(texts: string[]): string[] {
  return texts.filter(
    (text) => /\(s\)/.test(text) || [...text.matchAll(/\b(\d+) (item|token|memory write|hit)(s?)\b/g)].some(([, n, , s]) => (Number(n) === 1) !== (s === '')),
  )
}

describe('demo: two devices of one user, syncing through the relay', () => {
  let stack: DemoStack
  let profileA: Profile
  let profileB: Profile
  let contextA: BrowserContext
  let contextB: BrowserContext
  let a: DemoPage
  let b: DemoPage
  const user = `e2e-${Date.now().toString(36)}`
  let redWrittenBy = 0

  beforeAll(async () => {
    await mkdir(artifacts, { recursive: true })
    stack = await startDemoStack()
    profileA = await launchProfile('demo-A')
    profileB = await launchProfile('demo-B')
    contextA = profileA.context
    contextB = profileB.context
    for (const context of [contextA, contextB]) await context.pages()[0]?.setViewportSize({ width: 1280, height: 900 })
    a = await openDemoPage(contextA.pages()[0] ?? (await contextA.newPage()), stack.url, 'A', user)
    b = await openDemoPage(contextB.pages()[0] ?? (await contextB.newPage()), stack.url, 'B', user)
  })

  // Any console error fails the test that caused it (each test starts from none).
  afterEach(() => {
    const logged = [a, b].flatMap((device) => (device ? device.consoleErrors.splice(0).map((text) => `${device === a ? 'A' : 'B'}: ${text}`) : []))
    expect(logged).toEqual([])
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
    // Nothing in the background is failing, so the header shows no problem.
    for (const device of [a, b]) expect(await device.page.locator('#background-status').isHidden()).toBe(true)
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
      redWrittenBy = Date.now()
      await a.setFact('only_a', 'from A')
      // Past the next whole second, so the "as of" view (second precision) can tell red from blue.
      const redSecond = Math.floor(redWrittenBy / 1000)
      await expect.poll(() => Math.floor(Date.now() / 1000), { interval: 50 }).toBeGreaterThan(redSecond)
      await b.setFact('color', 'blue')
      await b.setFact('only_b', 'from B')
      // B really is cut off: A's writes reached the relay, and still neither sees the other's write.
      await a.waitForSync('synced', 10_000)
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

  it('inspects: core block with a limit meter, history, delete and restore, as of, search by kind, omitted context', async () => {
    const page = a.page
    // Core block: created, edited, measured against its limit, synced to B.
    const blocks = page.locator('#blocks')
    await blocks.getByLabel('Block label').fill('persona')
    await blocks.getByLabel('Limit (characters)').fill('60')
    await blocks.getByRole('button', { name: 'Add block' }).click()
    const persona = blocks.locator('.block[data-label="persona"]')
    const text = 'Prefers short answers. Lives in Lisbon.'
    await persona.getByLabel('persona', { exact: true }).fill(text)
    expect(await persona.locator('.count').textContent()).toBe(`${text.length} / 60 characters`)
    expect(await persona.locator('meter').evaluate((m: HTMLMeterElement) => [m.value, m.max])).toEqual([text.length, 60])
    await persona.getByRole('button', { name: 'Save' }).click()
    await expect
      .poll(
        () =>
          b.page
            .locator('#blocks .block[data-label="persona"] textarea')
            .inputValue()
            .catch(() => ''),
        { timeout: 5_000 },
      )
      .toBe(text)
    // Over the limit: the meter says so and the store refuses with limit_exceeded.
    await persona.getByLabel('persona', { exact: true }).fill(text + ' And a very long tail.')
    expect(await persona.locator('.count.over').count()).toBe(1)
    await persona.getByRole('button', { name: 'Save' }).click()
    // ...and the editor is marked invalid, linked to the message that says why.
    const editor = persona.getByLabel('persona', { exact: true })
    await expect.poll(() => editor.getAttribute('aria-invalid')).toBe('true')
    const description = (): Promise<string> =>
      editor.evaluate((c) =>
        (c.getAttribute('aria-describedby') ?? '')
          .split(/\s+/)
          .map((id) => document.getElementById(id)?.textContent ?? `(missing #${id})`)
          .join(' | '),
      )
    expect(await description()).toContain('limit_exceeded')
    expect(await persona.locator('.field-error').isVisible()).toBe(true)
    await editor.fill(text)
    expect(await editor.getAttribute('aria-invalid')).toBeNull()
    expect(await description()).not.toContain('limit_exceeded')
    expect(await persona.locator('.field-error').isVisible()).toBe(false)

    // History of a key edited on both devices.
    const facts = page.locator('#facts')
    await facts.locator('tr[data-key="color"] summary').click()
    await expect
      .poll(() => facts.locator('tr[data-key="color"] .history li').allTextContents())
      .toEqual(expect.arrayContaining([expect.stringContaining('red'), expect.stringContaining('blue')]))
    // The open history survives the table's re-render, after an own change and after a synced one.
    const colorHistory = facts.locator('tr[data-key="color"] details.fact-history')
    const isOpen = (): Promise<boolean> => colorHistory.evaluate((d: HTMLDetailsElement) => d.open)
    await a.setFact('history_probe', 'own')
    expect(await isOpen()).toBe(true)
    await b.setFact('history_probe', 'synced')
    await a.waitForFact('history_probe', 'synced', 5_000)
    expect(await isOpen()).toBe(true)
    await expect
      .poll(() => facts.locator('tr[data-key="color"] .history li').allTextContents())
      .toEqual(expect.arrayContaining([expect.stringContaining('red'), expect.stringContaining('blue')]))
    await facts.locator('tr[data-key="color"] summary').click()
    expect(await isOpen()).toBe(false)
    await b.setFact('history_probe', 'closed stays closed')
    await a.waitForFact('history_probe', 'closed stays closed', 5_000)
    expect(await isOpen()).toBe(false)

    // "As of" a time between red (A) and blue (B): red.
    const t = new Date(Math.ceil(redWrittenBy / 1000) * 1000)
    const pad = (n: number): string => String(n).padStart(2, '0')
    await facts
      .getByLabel('As of')
      .fill(`${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`)
    await a.waitForFact('color', 'red')
    await facts.getByRole('button', { name: 'Now' }).click()
    await a.waitForFact('color', 'blue')

    // Delete on A: gone on both, listed as deleted; restore brings it back everywhere.
    await facts.getByRole('button', { name: 'Delete only_a' }).click()
    await expect.poll(() => a.factValue('only_a')).toBeUndefined()
    await expect.poll(() => b.factValue('only_a'), { timeout: 5_000 }).toBeUndefined()
    await facts.locator('details.deleted-facts > summary').click()
    expect(await facts.locator('.deleted li[data-key="only_a"] .value').textContent()).toBe('from A')
    await facts.getByRole('button', { name: 'Restore only_a' }).click()
    await a.waitForFact('only_a', 'from A')
    await b.waitForFact('only_a', 'from A', 5_000)

    // Search, hits grouped by kind.
    const search = page.locator('#search')
    await search.getByLabel('Search memory').fill('Lisbon')
    await search.getByRole('button', { name: 'Search' }).click()
    await expect.poll(() => search.locator('.hit-group[data-kind="fact"] .hit').count()).toBeGreaterThan(0)
    expect(await search.locator('.hit-group[data-kind="fact"]').textContent()).toContain('Lisbon')

    // Storage: bytes used of the origin's quota, as the browser estimates them, and whether the data is persistent.
    const storage = page.locator('#storage')
    const estimate = (): Promise<{ quota: number; persisted: boolean }> =>
      page.evaluate(async () => ({ quota: (await navigator.storage.estimate()).quota!, persisted: await navigator.storage.persisted() }))
    await expect.poll(() => storage.locator('#storage-meter').evaluate((m: HTMLMeterElement) => m.value)).toBeGreaterThan(0)
    const [used, quota] = await storage.locator('#storage-meter').evaluate((m: HTMLMeterElement) => [m.value, m.max])
    // The quota follows the disk's free space, so two readings a moment apart may differ a little.
    expect(Math.abs(quota! - (await estimate()).quota) / quota!).toBeLessThan(0.01)
    expect(used!).toBeLessThan(quota!)
    expect(await storage.locator('#storage-used').textContent()).toMatch(/^[\d.]+ (bytes|kB|MB|GB) used of [\d.]+ (kB|MB|GB|TB) quota \([\d.]+%\)$/)
    if (!(await estimate()).persisted) await storage.getByRole('button', { name: 'Keep data (persist)' }).click()
    // The badge says what the browser decided (it may grant or refuse by its own rules).
    const badgeAgrees = async (): Promise<boolean> =>
      (await storage.locator('#storage-persisted').textContent()) === ((await estimate()).persisted ? 'persistent' : 'best effort (may be evicted)')
    await expect.poll(badgeAgrees).toBe(true)

    // A small budget: the preview stays within it and lists what it left out.
    const preview = page.locator('#context')
    await preview.getByLabel('Prompt').fill('colour')
    await preview.getByLabel('Budget (tokens)').fill('20')
    await preview.getByRole('button', { name: 'Preview context' }).click()
    await expect.poll(() => preview.locator('.omitted li').count()).toBeGreaterThan(0)
    const total = await preview.locator('meter.total').evaluate((m: HTMLMeterElement) => [m.value, m.max])
    expect(total[0]).toBeLessThanOrEqual(20)
    expect(total[1]).toBe(20)
    // Counts agree with their nouns: "1 item", "2 items".
    const labels = await preview.locator('.section-head small, .omitted li, .context-total').allTextContents()
    expect(labels.length).toBeGreaterThan(1)
    expect(ungrammatical(labels)).toEqual([])
    await preview.screenshot({ path: `${artifacts}demo-context-omitted.png` })
  })

  it('is usable by keyboard with labelled controls: Tab, Enter submits, Escape cancels an edit and focus returns, focus is visible', async () => {
    const page = a.page
    // Every form control has an accessible name from a <label> or aria-label.
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, textarea, select')]
        .filter((c) => (c as HTMLInputElement).labels?.length === 0 && !c.getAttribute('aria-label') && !c.getAttribute('aria-labelledby'))
        .map((c) => c.outerHTML),
    )
    expect(unlabelled).toEqual([])
    // Every hint under a field is the accessible description of its control.
    const hints = await page.evaluate(() =>
      [...document.querySelectorAll('.field')].flatMap((f) => {
        const ids = (f.querySelector('input, textarea, select')?.getAttribute('aria-describedby') ?? '').split(/\s+/)
        return [...f.querySelectorAll('small.hint')].map((h) => ({ hint: h.textContent, linked: h.id !== '' && ids.includes(h.id) }))
      }),
    )
    expect(hints.length).toBeGreaterThan(2)
    expect(hints.filter((h) => !h.linked)).toEqual([])
    const focused = () =>
      page.evaluate(() => {
        const e = document.activeElement as HTMLElement
        return {
          tag: e.tagName,
          text: e.textContent?.trim(),
          label: e.getAttribute('aria-label') ?? (e as HTMLInputElement).labels?.[0]?.textContent ?? null,
          outline: getComputedStyle(e).outlineStyle,
        }
      })
    // The skip link comes first and takes the keyboard to the chat.
    expect(await page.evaluate(() => document.querySelector('a[href], button, input, textarea, select')?.textContent)).toBe('Skip to chat')
    await page.getByRole('link', { name: 'Skip to chat' }).focus()
    await page.keyboard.press('Enter')
    await page.keyboard.press('Tab')
    expect(await focused()).toMatchObject({ tag: 'TEXTAREA', label: 'Message' })

    // Set a fact with the keyboard only: type, Tab to the next field, Enter on the button.
    const facts = page.locator('#facts')
    await facts.getByLabel('Key', { exact: true }).focus()
    await page.keyboard.type('kb_key')
    await page.keyboard.press('Tab')
    expect((await focused()).label).toBe('Value')
    await page.keyboard.type('typed')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Tab')
    const button = await focused()
    expect(button).toMatchObject({ tag: 'BUTTON', text: 'Set fact' })
    expect(button.outline).not.toBe('none') // focus is visible
    await page.keyboard.press('Enter')
    await a.waitForFact('kb_key', 'typed')
    expect((await focused()).label).toBe('Key')

    // Edit in place: Enter opens the editor, Escape cancels and focus returns to the row.
    await facts.getByRole('button', { name: 'Edit kb_key' }).focus()
    await page.keyboard.press('Enter')
    expect((await focused()).label).toBe('New value of kb_key')
    await page.keyboard.type(' and more')
    await page.keyboard.press('Escape')
    await expect.poll(async () => (await focused()).label).toBe('Edit kb_key')
    expect(await a.factValue('kb_key')).toBe('typed')
    // Enter saves: the new value shows here and on the other device, and focus is back on the row.
    await page.keyboard.press('Enter')
    await page.keyboard.press('End')
    await page.keyboard.type(' twice')
    await page.keyboard.press('Enter')
    await a.waitForFact('kb_key', 'typed twice')
    await expect.poll(async () => (await focused()).label).toBe('Edit kb_key')
    await b.waitForFact('kb_key', 'typed twice', 5_000)
    // A synced change from the other device re-renders the table without taking the focus away.
    await facts.getByRole('button', { name: 'Delete kb_key' }).focus()
    await b.setFact('kb_remote', 'from B')
    await a.waitForFact('kb_remote', 'from B', 5_000)
    // The re-rendered table has been painted: focus is read after the frame, not after a guess.
    await a.page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))
    expect((await focused()).label).toBe('Delete kb_key')
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
    // The agent speaks to the user: their "my" is its "your".
    expect(await chat.locator('.transcript .role-assistant').last().textContent()).toContain('Noted: your favourite colour is teal.')
    await a.waitForFact('favourite_colour', 'teal')
    await b.waitForFact('favourite_colour', 'teal', 5_000)
    // The inspector's history shows where the extractor's write came from: its turn and the messages it read.
    const factsPanel = a.page.locator('#facts')
    await factsPanel.locator('tr[data-key="favourite_colour"] summary').click()
    await expect
      .poll(() => factsPanel.locator('tr[data-key="favourite_colour"] .history li .provenance').allTextContents())
      .toEqual([expect.stringMatching(/from turn:.+, 2 messages/)])
    await factsPanel.locator('tr[data-key="favourite_colour"] summary').click()
    await say(`Remember that the payload is ${hostile}`)
    await say('What is my favourite colour?')
    await expect.poll(() => chat.locator('.transcript .role-assistant').last().textContent()).toContain('teal')
    expect(await chat.locator('.transcript .role-user').filter({ hasText: hostile }).count()).toBe(1)
    expect(await a.factValue('payload')).toBe(hostile)
    expect(await a.page.locator('#app img').count()).toBe(0)
    expect(a.dialogs).toEqual([])
    // The context preview shows the last turn's context, a bar per section.
    await expect.poll(() => a.page.locator('#context .context-section').count()).toBeGreaterThan(0)
    const counts = await a.page.locator('#chat .turn-note, #context .section-head small, #search .hit-group h3').allTextContents()
    expect(counts.join(' ')).toMatch(/\b1 memory write\b/)
    expect(ungrammatical(counts)).toEqual([])

    // Search ranks the turns next to a matching turn too; those without the query's words are marked as context.
    const search = a.page.locator('#search')
    await search.getByLabel('Search memory').fill('teal')
    await search.getByRole('button', { name: 'Search' }).click()
    const messageHits = search.locator('.hit-group[data-kind="message"]')
    await expect.poll(() => messageHits.locator('.hit-context').count()).toBeGreaterThan(0)
    for (const text of await messageHits.locator('.hit-context p').allTextContents()) expect(text.toLowerCase()).not.toContain('teal')
    for (const text of await messageHits.locator('.hit:not(.hit-context) p').allTextContents()) expect(text.toLowerCase()).toContain('teal')
    expect(await messageHits.locator('.hit-context .badge').first().textContent()).toBe('context')

    await a.page.locator('#context').scrollIntoViewIfNeeded()
    await a.page.screenshot({ path: `${artifacts}demo-page-A.png`, fullPage: true })
    await a.page.locator('#inspector').screenshot({ path: `${artifacts}demo-inspector.png` })
    await chat.screenshot({ path: `${artifacts}demo-chat.png` })
    await b.page.screenshot({ path: `${artifacts}demo-page-B.png`, fullPage: true })

    // Layout: the controls of a form line up even when one field has a hint below it; nothing overflows sideways.
    const tops = await a.page
      .getByRole('button', { name: 'Set fact' })
      .evaluate((button) => [...button.closest('form')!.querySelectorAll('input, button')].map((c) => c.getBoundingClientRect().top))
    expect(Math.max(...tops) - Math.min(...tops)).toBeLessThanOrEqual(1)
    const overflowing = (): Promise<string[]> =>
      a.page.evaluate(() =>
        [document.documentElement, ...document.querySelectorAll<HTMLElement>('.panel')]
          .filter((e) => e.scrollWidth > e.clientWidth + 1)
          .map((e) => e.id || e.tagName),
      )
    expect(await overflowing()).toEqual([])
    // Text on the accent buttons is readable (WCAG AA, 4.5:1) in the light and the dark scheme.
    const contrast = (): Promise<number> =>
      a.page.evaluate(() => {
        const luminance = (css: string): number => {
          const [r, g, b] = css
            .match(/[\d.]+/g)!
            .slice(0, 3)
            .map((v) => Number(v) / 255)
            .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
          return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
        }
        return Math.min(
          ...[...document.querySelectorAll('button[type=submit]')].map((button) => {
            const style = getComputedStyle(button)
            const [light, dark] = [luminance(style.color), luminance(style.backgroundColor)].sort((x, y) => y - x)
            return (light! + 0.05) / (dark! + 0.05)
          }),
        )
      })
    expect(await contrast()).toBeGreaterThanOrEqual(4.5)
    await a.page.emulateMedia({ colorScheme: 'dark' })
    try {
      expect(await contrast()).toBeGreaterThanOrEqual(4.5)
      await a.page.screenshot({ path: `${artifacts}demo-page-A-dark.png`, fullPage: true })
    } finally {
      await a.page.emulateMedia({ colorScheme: 'light' })
    }
  })

  it("shows B's copy of A's chat once both devices sync the project's chats", async () => {
    // B's Sessions panel says why A's chat is not there, and offers the switch.
    const note = b.page.locator('#sessions #chat-sync-note')
    expect(await note.isVisible()).toBe(true)
    expect(await note.textContent()).toContain('Conversations are not synced by default')
    const boxA = a.page.locator('#projects .project.current input[aria-label^="Sync chats"]')
    await boxA.check()
    await expect.poll(() => boxA.isChecked()).toBe(true)
    await note.getByRole('button', { name: "Sync this project's chats" }).click()
    await expect.poll(() => b.page.locator('#projects .project.current input[aria-label^="Sync chats"]').isChecked()).toBe(true)
    await expect.poll(() => note.isVisible()).toBe(false)
    expect(await a.page.locator('#sessions #chat-sync-note').isVisible()).toBe(false)
    const transcript = b.page.locator('#chat .transcript')
    await expect.poll(() => transcript.locator('.role-user').filter({ hasText: 'favourite colour is teal' }).count(), { timeout: 15_000 }).toBe(1)
    await expect
      .poll(() => transcript.locator('.role-assistant').count(), { timeout: 15_000 })
      .toBe(await a.page.locator('#chat .transcript .role-assistant').count())
    // The same messages in the same order (A's turn notes are A's own and do not travel).
    expect(await transcript.locator('.message > p').allTextContents()).toEqual(await a.page.locator('#chat .transcript .message > p').allTextContents())
  })

  it('wraps a long key and value on both devices: nothing overflows sideways, and the version column is explained', async () => {
    const key = `long_${'key_without_spaces_'.repeat(9)}end`
    const value = 'v'.repeat(300)
    await a.setFact(key, value)
    await b.waitForFact(key, value, 5_000)
    for (const device of [a, b]) {
      await device.page.locator(`#facts tr[data-key="${key}"] summary`).click()
      const overflowing = await device.page.evaluate(() =>
        [document.documentElement, ...document.querySelectorAll<HTMLElement>('.panel')]
          .filter((e) => e.scrollWidth > e.clientWidth + 1)
          .map((e) => e.id || e.tagName),
      )
      expect(overflowing).toEqual([])
      expect(await device.page.locator('#fact-version-note').textContent()).toContain('Each device numbers its own history')
    }
    await a.page.getByRole('button', { name: `Delete ${key}` }).click()
    await expect.poll(() => b.factValue(key), { timeout: 5_000 }).toBeUndefined()
  })

  it('a page restored from the back/forward cache reconnects instead of keeping a closed memory', async () => {
    const page = a.page
    // What the browser does around the bfcache: pagehide (persisted) on leaving, pageshow (persisted) on coming back.
    await page.evaluate(() => window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true })))
    const reloaded = page.waitForEvent('load', { timeout: 20_000 })
    await page.evaluate(() => {
      setTimeout(() => window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true })), 0)
    })
    await reloaded
    await page.locator('#facts tbody tr').first().waitFor({ timeout: 20_000 })
    await a.waitForFact('city', 'Lisbon')
    await a.setFact('after_bfcache', 'works')
    await b.waitForFact('after_bfcache', 'works', 5_000)
    expect(a.errors).toEqual([])
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
