import { afterAll, beforeAll, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import * as Y from 'yjs'
import { websocketConnector } from '@engram/sync'
import type { ConnectionStatus } from '@engram/sync'
import { connectClient, startRelay, tokenFor, waitFor } from '../apps/relay/test/relay-process.js'
import type { RelayProcess } from '../apps/relay/test/relay-process.js'

let relay: RelayProcess
beforeAll(async () => {
  relay = await startRelay()
})
afterAll(async () => {
  await relay.stop()
})

it('a sync connection outliving its token is closed at expiry, fetches a fresh token and carries on', async () => {
  let tokens = 0
  const statuses: ConnectionStatus[] = []
  const doc = new Y.Doc()
  const connect = websocketConnector({
    url: relay.wsUrl,
    // Each token lives one to two seconds (expiry has one-second resolution): the relay closes the
    // socket when it expires (4419).
    token: async () => {
      tokens++
      return await tokenFor('refresh', 2)
    },
    WebSocket,
    network: null,
    heartbeatMs: 0,
    backoff: { initialMs: 20, maxMs: 50 },
  })
  const connection = connect({
    doc,
    room: 'refresh/p',
    projectId: 'p',
    setStatus: (s) => {
      statuses.push(s)
    },
  })
  try {
    await waitFor(() => statuses.includes('synced'), 5000, 'the first sync')
    await waitFor(() => tokens >= 3, 10_000, 'two token refreshes')
    // Only short gaps: offline (between sockets) then synced again, never an error.
    expect(statuses).not.toContain('error')
    await waitFor(() => statuses.at(-1) === 'synced', 5000, 'synced again')
    // And the connection still carries updates.
    doc.getMap('m').set('after-refresh', 1)
    const peer = connectClient(relay, 'refresh/p', await tokenFor('refresh'))
    await peer.synced
    await waitFor(() => peer.doc.getMap('m').has('after-refresh'), 5000, 'an update after the refresh')
    peer.destroy()
  } finally {
    connection.destroy()
  }
}, 30_000)
