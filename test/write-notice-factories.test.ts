import { IDBFactory } from 'fake-indexeddb'
import { expect, it } from 'vitest'
import { connectWithNotices as connect } from './support/write-notices.js'

// Write notices go between stores on one IndexedDB factory only (packages/core/src/search/cache/foreign-writes.ts).
it('a store on another factory with the same name hears nothing', async () => {
  const one = await connect(new IDBFactory(), 'two-factories')
  const other = await connect(new IDBFactory(), 'two-factories')
  const session = (await one.memory.sessions.create('user')).id
  await one.memory.messages.append(session, { role: 'user', content: 'first' })
  // A marker through `other`'s own factory: a notice from `one` would have come before it.
  const peer = await connect(other.memory.indexedDB, 'two-factories')
  await peer.memory.facts.set('user', 'marker', 1)
  expect((await other.notice('user', 'facts')).projects).toEqual({ user: ['facts'] })
  expect(other.received.filter((n) => n.projects.user?.includes('messages'))).toEqual([])
  for (const m of [one, other, peer]) m.memory.close()
})
