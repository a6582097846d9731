import { IDBFactory } from 'fake-indexeddb'
import { describe, expect, it } from 'vitest'
import { connectWithNotices as connect } from '../../../../../test/support/write-notices.js'

/*
 * Two connections to one database (two tabs' workers): what one writes, the other's search and
 * context see once its notice arrived (foreign-writes.ts), though the other had searched and
 * cached before. Each test waits for the notice it expects, never for time. That a store on
 * another factory hears nothing is in test/write-notice-factories.test.ts (the `globals`
 * project runs this file again with one factory for every store).
 */

const TOPICS = ['kayak', 'violin', 'glacier', 'saffron']

describe('writes of another connection to the same database', () => {
  it('a second store sees the first one’s new message in search', async () => {
    const indexedDB = new IDBFactory()
    const a = await connect(indexedDB, 'two-tabs-search')
    await a.memory.projects.create({ id: 'p1', name: 'P' })
    const session = await a.memory.sessions.create('p1')
    for (const topic of TOPICS) await a.memory.messages.append(session.id, { role: 'user', content: `a note about the ${topic}` })
    const b = await connect(indexedDB, 'two-tabs-search')
    // B loads its index state and caches the hits.
    expect((await b.memory.search('p1', 'kayak note'))[0]?.text).toBe('a note about the kayak')
    expect(await b.memory.search('p1', 'lighthouse')).toEqual([])

    await a.memory.messages.append(session.id, { role: 'assistant', content: 'the lighthouse keeper waved' })
    await b.notice('p1', 'messages')
    expect((await b.memory.search('p1', 'lighthouse keeper'))[0]?.text).toBe('the lighthouse keeper waved')
    // And the other way round.
    await b.memory.messages.append(session.id, { role: 'user', content: 'a violin bow of pernambuco' })
    await a.notice('p1', 'messages')
    expect((await a.memory.search('p1', 'pernambuco'))[0]?.text).toBe('a violin bow of pernambuco')
    a.memory.close()
    b.memory.close()
  })

  it('a second store’s context shows the first one’s new fact', async () => {
    const indexedDB = new IDBFactory()
    const a = await connect(indexedDB, 'two-tabs-facts')
    await a.memory.projects.create({ id: 'p1', name: 'P' })
    await a.memory.facts.set('p1', 'editor', 'vim')
    const b = await connect(indexedDB, 'two-tabs-facts')
    expect((await b.memory.context.build('p1', { budget: 500 })).text).toContain('vim')
    await a.memory.facts.set('p1', 'editor', 'helix')
    await b.notice('p1', 'facts')
    const text = (await b.memory.context.build('p1', { budget: 500 })).text
    expect(text).toContain('helix')
    expect(text).not.toContain('vim')
    a.memory.close()
    b.memory.close()
  })
})
