import { type Memory, openMemory } from '@engram/core'
import { createLoopbackNetwork, startSync, type Sync } from '@engram/sync'
import type { AtRestHarness } from './at-rest-harness.js'

let memory: Memory | undefined
let sync: Sync | undefined
const network = createLoopbackNetwork()

const importKey = (raw: number[]) => crypto.subtle.importKey('raw', new Uint8Array(raw), 'AES-GCM', false, ['encrypt', 'decrypt'])

function current(): Memory {
  if (!memory) throw new Error('call atRest.open() first')
  return memory
}

async function settled(m: Memory) {
  const now = await m.encryption.status()
  if (now.state === 'encrypted' || now.state === 'plain') return now
  return new Promise<typeof now>((resolve) => {
    void m.encryption.subscribe((s) => {
      if (s.state === 'encrypted') resolve(s)
    })
  })
}

const harness: AtRestHarness = {
  async open(userId, key) {
    memory = await openMemory({ appId: 'e2e-at-rest', userId, ...(key ? { encryption: { key: await importKey(key) } } : {}) })
    if (!(await memory.projects.get('p'))) await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: true, messages: true } })
    sync = startSync(memory, { connect: network.connector('a'), onError: (e) => console.warn('sync', e) })
    await memory.sync.whenSynced('p')
    return settled(memory)
  },
  async write(c) {
    const m = current()
    await m.facts.set('p', c.factKey, c.factValue)
    await m.blocks.set('p', 'persona', c.blockValue)
    const session = await m.sessions.create('p', { title: c.sessionTitle })
    await m.messages.append(session.id, { role: 'user', content: c.userMessage, meta: { note: c.messageMeta } })
    await m.messages.appendExchange(session.id, `again ${c.userMessage}`, c.assistantMessage)
    await sync!.flush()
    await network.settle()
    await sync!.flush()
  },
  async enable(key) {
    const m = current()
    await m.encryption.enable(await importKey(key))
    await sync!.flush()
    return m.encryption.status()
  },
  async read(c) {
    const m = current()
    const [session] = (await m.sessions.list('p')).items
    const messages = session ? (await m.messages.tail(session.id, 10)).map((x) => x.content) : []
    return { fact: (await m.facts.get('p', c.factKey))?.value, block: (await m.blocks.get('p', 'persona'))?.value, messages }
  },
  async databases() {
    return (await indexedDB.databases()).map((d) => d.name ?? '').sort()
  },
  async close() {
    await sync?.close()
    await memory?.close()
    sync = undefined
    memory = undefined
  },
}

window.atRest = harness
document.title = 'ready'
