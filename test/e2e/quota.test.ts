import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchProfile, startPageServer, type PageServer, type Profile } from './support/pages.js'
import type {} from './pages/harness.js'

/*
 * Storage quota in real Chromium: the origin's quota is lowered through the
 * DevTools protocol (Storage.overrideQuotaForOrigin) to a little above what
 * the store uses; a write past it must fail with `quota_exceeded` and leave
 * nothing of itself behind, and after a delete the store takes writes again.
 * Deletes write nothing (so they work on a full disk). Chromium gives back the
 * room of large values at once; that of many small rows only when its storage
 * compacts, so the passages here are large and do not compress.
 */

let server: PageServer
let profile: Profile | undefined

beforeAll(async () => {
  server = await startPageServer()
})
afterAll(async () => {
  await profile?.close()
  await server?.close()
})

describe('storage quota in Chromium', () => {
  it('reports usage and quota, refuses a write past the quota whole, and takes writes again after a delete', async () => {
    profile = await launchProfile('quota')
    const page = await server.open(profile, 'worker')
    // Chromium reads an origin's quota when a database opens: lower it first (2 MB above what is used).
    const usedAtStart = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0)
    const cdp = await profile.context.newCDPSession(page)
    const quotaSize = usedAtStart + 2 * 1024 * 1024
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: server.origin, quotaSize })
    await page.evaluate(() => window.harness.open('dedicated', `quota-${Date.now().toString(36)}`))
    const before = await page.evaluate(async () => {
      const m = window.harness.memory()
      await m.projects.create({ name: 'Q', id: 'q' })
      await m.sessions.create('q', { id: 's' })
      await m.messages.append('s', { role: 'user', content: 'the first message fits easily' })
      return { stats: await m.stats(), persisted: await m.persist() }
    })
    expect(before.stats.storage?.usedBytes).toBeGreaterThan(0)
    expect(before.stats.storage?.quotaBytes).toBeGreaterThan(before.stats.storage!.usedBytes)
    expect(typeof before.persisted).toBe('boolean')

    // Long passages (190,000 characters that do not compress: a marker word and one long random token) until the quota refuses one.
    const result = await page.evaluate(async () => {
      const m = window.harness.memory()
      const stored: string[] = []
      const text = (i: number) => {
        let s = `passage${i}marker `
        let x = i + 1
        while (s.length < 190_000) {
          x = (x * 1103515245 + 12345) % 2147483648
          s += x.toString(36)
        }
        return s.slice(0, 190_000)
      }
      for (let i = 0; i < 120; i++) {
        try {
          stored.push((await m.archive.create('q', text(i))).id)
        } catch (e) {
          const err = e as { code?: string; name?: string }
          const after = await m.stats('q')
          const refusedVisible = (await m.search('q', `passage${i}marker`)).length
          const earlierVisible = (await m.search('q', 'passage0marker')).length
          return {
            code: err.code,
            name: err.name,
            refusedAt: i,
            stored,
            passages: after.passages,
            refusedVisible,
            earlierVisible,
            quota: after.storage?.quotaBytes,
          }
        }
      }
      return { code: undefined, refusedAt: -1, stored, passages: -1, refusedVisible: -1, earlierVisible: -1 }
    })
    expect(result.code).toBe('quota_exceeded')
    expect(result.name).toBe('MemoryError')
    expect(result.refusedAt).toBeGreaterThan(0)
    // Nothing of the refused write: neither its row nor its postings; the earlier ones are intact.
    expect(result.passages).toBe(result.stored.length)
    expect(result.refusedVisible).toBe(0)
    expect(result.earlierVisible).toBe(1)

    // Deleting passages frees room: the same kind of write succeeds again.
    const again = await page.evaluate(async (ids) => {
      const m = window.harness.memory()
      for (const id of ids) await m.archive.delete(id)
      let big = 'passage99marker '
      for (let x = 7; big.length < 190_000; ) big += (x = (x * 1103515245 + 12345) % 2147483648).toString(36)
      const large = await m.archive.create('q', big.slice(0, 190_000))
      const p = await m.archive.create('q', 'a small passage after the delete')
      const message = await m.messages.append('s', { role: 'user', content: 'and a message too' })
      return {
        passage: p.id,
        seq: message.seq,
        found: (await m.search('q', 'small passage')).map((h) => h.id),
        large: (await m.search('q', 'passage99marker')).map((h) => h.id),
        largeId: large.id,
      }
    }, result.stored)
    expect(again.seq).toBe(2)
    expect(again.found).toEqual([again.passage])
    expect(again.large).toEqual([again.largeId])
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: server.origin })
  })
})
