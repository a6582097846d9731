import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../../test/support/memory.js'

async function key() {
  return crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])
}

describe('smoke', () => {
  it('round trips', async () => {
    const k = await key()
    const m = await openTestMemory({ encryption: { key: k } })
    await m.projects.create({ id: 'p1', name: 'Secret project' })
    await m.facts.set('p1', 'favourite colour', 'octarine', { tags: ['colours'] })
    expect((await m.facts.get('p1', 'favourite colour'))?.value).toBe('octarine')
    const s = await m.sessions.create('p1')
    await m.messages.append(s.id, { role: 'user', content: 'the zebra crossing is purple' })
    const hits = await m.search('p1', 'zebra')
    expect(hits.map((h) => h.text)).toContain('the zebra crossing is purple')
    const list = await m.facts.list('p1', { tag: 'colours' })
    expect(list.items.map((f) => f.key)).toEqual(['favourite colour'])
    await m.close()
    const again = await (await import('@engram/core')).openMemory({ appId: 'test', userId: (m as any).userId, indexedDB: m.indexedDB, IDBKeyRange: (await import('fake-indexeddb')).IDBKeyRange, encryption: { key: k } })
    expect((await again.facts.get('p1', 'favourite colour'))?.value).toBe('octarine')
    await expect((await import('@engram/core')).openMemory({ appId: 'test', userId: (m as any).userId, indexedDB: m.indexedDB, IDBKeyRange: (await import('fake-indexeddb')).IDBKeyRange, encryption: { key: await key() } })).rejects.toMatchObject({ code: 'crypto' })
    await again.close()
  })
})
