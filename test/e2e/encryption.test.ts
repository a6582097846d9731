import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { workerTabs } from './support/worker-tabs.js'
import type {} from './pages/harness.js'

/*
 * At-rest encryption in real Chromium: the store in a dedicated worker and in
 * the page itself, canaries written through the API, then every object store
 * and index of the raw IndexedDB read in the page and searched for them.
 */

let users = 0
const tabs = workerTabs()
const tab = async (): Promise<Page> => tabs.tab(await tabs.profile())
const user = (): string => `enc${++users}-${Date.now().toString(36)}`

/** Runs in the page: writes canaries, closes, dumps the raw database, reopens with a wrong key and the right one. */
async function scenario(page: Page, where: 'dedicated' | 'page') {
  return page.evaluate(
    async ([where, userId]) => {
      const h = window.harness
      const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])
      const open = (k: CryptoKey) =>
        where === 'page' ? h.openLocal(userId, { encryption: { key: k } }) : h.open('dedicated', userId, { encryption: { key: k } })
      await open(key)
      const m = h.memory()
      const canaries = ['zqfactkeyx7', 'zqfactvaluex7', 'zqtagx7', 'zqblockx7', 'zqmessagex7', 'zqpassagex7', 'zqjournalx7', 'zqprojectx7']
      const project = await m.projects.create({ name: 'zqprojectx7' })
      await m.facts.set(project.id, 'zqfactkeyx7', 'zqfactvaluex7', { tags: ['zqtagx7'] })
      await m.blocks.set(project.id, 'persona', 'zqblockx7')
      const session = await m.sessions.create(project.id)
      await m.messages.appendExchange(session.id, 'what is zqmessagex7', 'it is a canary')
      await m.archive.create(project.id, 'a passage about zqpassagex7')
      await m.journal.append(session.id, { kind: 'note', payload: { text: 'zqjournalx7' } })
      const hits = (await m.search(project.id, 'zqmessagex7')).length
      const status = await m.encryption.status()
      await m.close()
      const dump = await h.rawDump(`engram:e2e:${userId}`)
      const found = canaries.filter((c) => Object.values(dump).some((text) => text.toLowerCase().includes(c)))
      const wrong = await open(await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])).then(
        () => 'opened',
        (e: { code?: string }) => e.code,
      )
      const after = await h.rawDump(`engram:e2e:${userId}`)
      await open(key)
      const again = h.memory()
      const value = (await again.facts.get(project.id, 'zqfactkeyx7'))?.value
      await again.close()
      return { hits, status, parts: Object.keys(dump).length, found, wrong, unchanged: JSON.stringify(after) === JSON.stringify(dump), value }
    },
    [where, user()] as const,
  )
}

describe('at-rest encryption in Chromium', () => {
  it.each(['dedicated', 'page'] as const)(
    'no canary in any object store or index (store in the %s); a wrong key is crypto and writes nothing',
    async (where) => {
      const page = await tab()
      const result = await scenario(page, where)
      expect(result).toMatchObject({ status: { state: 'encrypted', generation: 1 }, found: [], wrong: 'crypto', unchanged: true, value: 'zqfactvaluex7' })
      expect(result.hits).toBeGreaterThan(0)
      expect(result.parts).toBeGreaterThan(30)
    },
  )
})
