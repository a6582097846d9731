import { describe, expect, it } from 'vitest'
import { workerTabs } from './support/worker-tabs.js'
import type {} from './pages/harness.js'

let users = 0
const { profile, tab } = workerTabs()
const user = (): string => `u${++users}-${Date.now().toString(36)}`

describe('@engram/worker in Chromium', () => {
  it('opens memory in a dedicated worker and closes it cleanly', async () => {
    const page = await tab(await profile())
    const opened = await page.evaluate((u) => window.harness.open('dedicated', u), user())
    expect(opened.mode).toBe('dedicated')
    expect(page.workers()).toHaveLength(1)
    const result = await page.evaluate(async () => {
      const m = window.harness.memory()
      const projects = (await m.projects.list()).map((p) => p.id)
      await m.close()
      const after = await m.facts.get('user', 'x').catch((e: { code?: string }) => e.code)
      return { projects, closed: m.closed, after }
    })
    expect(result.projects).toContain('user')
    expect(result).toMatchObject({ closed: true, after: 'closed' })
    // close() ended the worker.
    await expect.poll(() => page.workers().length).toBe(0)
  })

  it('roundtrips facts and messages through the worker', async () => {
    const page = await tab(await profile())
    await page.evaluate((u) => window.harness.open('dedicated', u), user())
    const result = await page.evaluate(async () => {
      const m = window.harness.memory()
      const project = await m.projects.create({ name: 'E2E' })
      await m.facts.set(project.id, 'editor', { name: 'vim', since: 2001 }, { tags: ['pref'] })
      const fact = await m.facts.get(project.id, 'editor')
      const session = await m.sessions.create(project.id)
      await m.messages.appendExchange(session.id, 'What editor do I use?', 'You use vim.')
      const tail = await m.messages.tail(session.id, 10)
      return { value: fact?.value, tags: fact?.tags, tail: tail.map((x) => [x.seq, x.role, x.content]) }
    })
    expect(result.value).toEqual({ name: 'vim', since: 2001 })
    expect(result.tags).toEqual(['pref'])
    expect(result.tail.map((t) => t.slice(1))).toEqual([
      ['user', 'What editor do I use?'],
      ['assistant', 'You use vim.'],
    ])
    expect(Number(result.tail[1]![0])).toBe(Number(result.tail[0]![0]) + 1)
  })

  it("carries an error's class and code across the boundary", async () => {
    const page = await tab(await profile())
    await page.evaluate((u) => window.harness.open('dedicated', u), user())
    const result = await page.evaluate(async () => {
      const m = window.harness.memory()
      const e = await m.facts.set('no-such-project', 'k', 1).then(
        () => undefined,
        (x: unknown) => x,
      )
      const bad = await m.facts.get('user', '').then(
        () => undefined,
        (x: unknown) => x,
      )
      const err = e as InstanceType<typeof window.harness.MemoryError>
      return {
        isMemoryError: e instanceof window.harness.MemoryError,
        code: err.code,
        name: err.name,
        message: err.message,
        badCode: (bad as { code?: string }).code,
      }
    })
    expect(result).toMatchObject({ isMemoryError: true, code: 'not_found', name: 'MemoryError', badCode: 'invalid_input' })
    expect(result.message).toMatch(/no-such-project|project/)
  })

  it('reports a failing UI-side embedder in memory.status and its recovery, with sync off', async () => {
    const page = await tab(await profile())
    const result = await page.evaluate(async (u) => {
      let failures = 1
      await window.harness.open('dedicated', u, {
        embedder: {
          dimensions: 3,
          embed: async (texts) => {
            if (failures-- > 0) throw new TypeError('embedding service offline')
            return texts.map(() => new Float32Array([1, 0, 0]))
          },
        },
      })
      const m = window.harness.memory()
      const states: string[] = []
      let recovered!: () => void
      const done = new Promise<void>((resolve) => {
        recovered = resolve
      })
      const off = await m.status.subscribe((s) => {
        states.push(s.embedder.state)
        if (s.embedder.state === 'ok' && states.includes('failing')) recovered()
      })
      await m.archive.create('user', 'the passport is in the top drawer')
      await done
      await off()
      const status = await m.status.get()
      return { states, lastError: status.embedder.lastError, sync: await m.sync.status('user'), leader: await m.sync.isLeader(), mode: m.mode }
    }, user())
    expect(result.states).toEqual(['failing', 'ok'])
    expect(result.lastError).toMatchObject({ source: 'embedder', code: 'internal', message: expect.stringContaining('embedding service offline') })
    expect(result).toMatchObject({ sync: 'off', leader: false, mode: 'dedicated' })
  })

  it('delivers changes to a subscription and stops after unsubscribe', async () => {
    const page = await tab(await profile())
    await page.evaluate((u) => window.harness.open('dedicated', u), user())
    await page.evaluate(async () => {
      await window.harness.watch()
      await window.harness.memory().facts.set('user', 'theme', 'dark')
    })
    await page.waitForFunction(() => window.harness.seen.length > 0)
    const seen = await page.evaluate(async () => {
      await window.harness.unwatch()
      const before = window.harness.seen.length
      await window.harness.memory().facts.set('user', 'theme', 'light')
      await new Promise((r) => setTimeout(r, 100))
      return { seen: window.harness.seen, before, after: window.harness.seen.length }
    })
    expect(seen.seen[0]).toMatchObject({ kind: 'facts', op: 'put', projectId: 'user' })
    expect(seen.after).toBe(seen.before)
  })

  it('keeps data across a page reload (real IndexedDB)', async () => {
    const p = await profile()
    const page = await tab(p)
    const u = user()
    await page.evaluate((id) => window.harness.open('dedicated', id), u)
    await page.evaluate(() => window.harness.memory().facts.set('user', 'city', 'Lisbon'))
    await page.reload()
    await page.waitForFunction(() => document.title === 'ready')
    await page.evaluate((id) => window.harness.open('dedicated', id), u)
    const value = await page.evaluate(async () => (await window.harness.memory().facts.get('user', 'city'))?.value)
    expect(value).toBe('Lisbon')
  })

  it("lets two tabs on one SharedWorker see each other's writes", async () => {
    const p = await profile()
    const [a, b] = [await tab(p), await tab(p)]
    const u = user()
    expect((await a.evaluate((id) => window.harness.open('shared', id), u)).mode).toBe('shared')
    expect((await b.evaluate((id) => window.harness.open('shared', id), u)).mode).toBe('shared')
    await b.evaluate(() => window.harness.watch())
    await a.evaluate(() => window.harness.memory().facts.set('user', 'from-a', 1))
    await b.waitForFunction(() => window.harness.seen.some((c) => c.kind === 'facts'))
    expect(await b.evaluate(async () => (await window.harness.memory().facts.get('user', 'from-a'))?.value)).toBe(1)
    await b.evaluate(() => window.harness.memory().facts.set('user', 'from-b', 2))
    expect(await a.evaluate(async () => (await window.harness.memory().facts.get('user', 'from-b'))?.value)).toBe(2)
    // One tab leaving does not close the store for the other.
    await a.close()
    expect(await b.evaluate(async () => (await window.harness.memory().facts.get('user', 'from-a'))?.value)).toBe(1)
  })

  it('relays changes between tabs that each run a dedicated worker', async () => {
    const p = await profile()
    const [a, b] = [await tab(p), await tab(p)]
    const u = user()
    await a.evaluate((id) => window.harness.open('dedicated', id), u)
    await b.evaluate((id) => window.harness.open('dedicated', id), u)
    await b.evaluate(() => window.harness.watch())
    await a.evaluate(() => window.harness.memory().facts.set('user', 'from-a', 'hello'))
    await b.waitForFunction(() => window.harness.seen.some((c) => c.kind === 'facts' && c.projectId === 'user'), undefined, { timeout: 5_000 })
    expect(await b.evaluate(async () => (await window.harness.memory().facts.get('user', 'from-a'))?.value)).toBe('hello')
  })

  it('works over a MessagePort handed to the worker (the Electron path)', async () => {
    const page = await tab(await profile())
    expect((await page.evaluate((u) => window.harness.open('port', u), user())).mode).toBe('port')
    const result = await page.evaluate(async () => {
      const m = window.harness.memory()
      await m.facts.set('user', 'via', 'port')
      const code = await m.facts.get('user', '').then(
        () => 'none',
        (e: { code?: string }) => e.code,
      )
      return { value: (await m.facts.get('user', 'via'))?.value, code }
    })
    expect(result).toEqual({ value: 'port', code: 'invalid_input' })
  })

  it('elects one sync leader among dedicated-worker tabs and hands over within a second', async () => {
    const p = await profile()
    const [a, b] = [await tab(p), await tab(p)]
    const u = user()
    await a.evaluate((id) => window.harness.open('fake-sync', id), u)
    await b.evaluate((id) => window.harness.open('fake-sync', id), u)
    await a.waitForFunction(() => window.harness.memory().sync.isLeader())
    expect(await b.evaluate(() => window.harness.memory().sync.isLeader())).toBe(false)
    const locks = await b.evaluate(async (id) => {
      const snapshot = await navigator.locks.query()
      const name = `engram-sync:engram:e2e:${id}`
      return { held: snapshot.held?.filter((l) => l.name === name).length, pending: snapshot.pending?.filter((l) => l.name === name).length }
    }, u)
    expect(locks).toEqual({ held: 1, pending: 1 })
    const t0 = Date.now()
    await a.close()
    await b.waitForFunction(() => window.harness.memory().sync.isLeader(), undefined, { polling: 20, timeout: 5_000 })
    const handover = Date.now() - t0
    expect(handover).toBeLessThan(1_000)
  })
})
