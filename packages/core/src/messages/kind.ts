import type { Transaction } from 'dexie'
import { defineKind } from '../store/kind.js'
import type { MessageRow, SessionRow } from '../store/rows.js'
import { legacyFillMiddleware, legacySessionStamp } from './legacy-fill.js'
import { legacyOrder } from './message-order.js'

/** Messages: the turns of a session, in the merged order of their keys. */
export const messagesKind = defineKind({
  name: 'messages',
  uses: ['sessions', 'people'],
  tables: {
    messages: {
      1: 'id, [sessionId+seq], [projectId+createdAt]',
      4: 'id, [sessionId+seq], [projectId+createdAt], [sessionId+at], hlc',
      // A project's messages are found through its sessions (message-order.ts `messagesOf`): one index less for every message written.
      7: 'id, [sessionId+seq], [sessionId+at], hlc',
    },
  },
  // Conversations that sync: messages get their merged order key and stamp, sessions a stamp.
  upgrades: { 4: upgradeConversations },
  // Message rows written without an order key, and session rows without a stamp (older dumps and callers), get the legacy ones.
  middleware: [legacyFillMiddleware],
  changeKinds: ['messages'],
  namespaces: ['messages'],
  mirrored: { when: 'conversations', document: 'session', descriptor: async () => (await import('./messages-sync.js')).syncedMessages },
  dump: { tables: ['messages'], projectRows: ['messages'] },
  searchDocs: ['message'],
})

async function upgradeConversations(tx: Transaction): Promise<void> {
  await tx
    .table('messages')
    .toCollection()
    .modify((m: MessageRow) => {
      if (m.at === undefined) Object.assign(m, legacyOrder(m))
    })
  await tx
    .table('sessions')
    .toCollection()
    .modify((s: SessionRow) => {
      s.hlc ??= legacySessionStamp(s)
    })
}
