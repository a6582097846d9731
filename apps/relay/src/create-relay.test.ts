import { afterEach, describe, expect, it } from 'vitest'
import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { WebSocket } from 'ws'
import { CloseCode } from '@engram/sync/close-codes'
import { defaultAuthorize } from './auth/authorize.js'
import type { Authorize } from './auth/authorize.js'
import { mintToken } from './auth/tokens.js'
import { createRelay } from './create-relay.js'
import type { RelayOptions } from './create-relay.js'
import { openSqliteStore } from './storage/persistence-sqlite.js'

const secret = 'create-relay-test-secret-0123456789'
const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop()
})

/** A relay on a fresh SQLite folder, listening on a free port of 127.0.0.1. */
async function startRelay(name: string, options: Partial<RelayOptions> = {}): Promise<string> {
  const relay = createRelay({ secret, store: openSqliteStore(mkdtempSync(join(tmpdir(), `engram-create-relay-${name}-`))), ...options })
  const server = createServer((req, res) => {
    if (!relay.handleRequest(req, res)) res.writeHead(404).end()
  })
  relay.attach(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  stops.push(async () => {
    server.close()
    await relay.close()
  })
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** Join `room` as `user`: 'joined' once the relay sends its first frame (sync step 1), else the close code. */
async function joinRoom(url: string, user: string, room: string): Promise<'joined' | number> {
  const ws = new WebSocket(`${url}/${room}?token=${await mintToken(secret, user)}`)
  const outcome = await new Promise<'joined' | number>((resolve, reject) => {
    ws.once('message', () => resolve('joined'))
    ws.once('close', (code) => resolve(code))
    ws.once('error', reject)
  })
  ws.terminate()
  return outcome
}

describe('createRelay authorize', () => {
  it('by default lets a user into their own rooms only', async () => {
    const url = await startRelay('default')
    expect(await joinRoom(url, 'a', 'a/shared')).toBe('joined')
    expect(await joinRoom(url, 'b', 'a/shared')).toBe(CloseCode.roomForbidden)
  })

  it('lets a custom rule admit user b to user a’s shared room, and the grant it receives is the token’s', async () => {
    const seen: Array<[string, string, boolean]> = []
    const authorize: Authorize = async (grant, room) => {
      seen.push([grant.user, room, grant.readOnly])
      return defaultAuthorize(grant, room) || (room === 'a/shared' && grant.user === 'b')
    }
    const url = await startRelay('shared', { authorize })
    expect(await joinRoom(url, 'b', 'a/shared')).toBe('joined')
    expect(await joinRoom(url, 'b', 'a/private')).toBe(CloseCode.roomForbidden)
    expect(await joinRoom(url, 'a', 'a/private')).toBe('joined')
    expect(seen).toEqual([
      ['b', 'a/shared', false],
      ['b', 'a/private', false],
      ['a', 'a/private', false],
    ])
  })

  it('refuses with roomForbidden whatever the default would allow when the rule says no', async () => {
    const url = await startRelay('refuse', { authorize: () => false })
    expect(await joinRoom(url, 'a', 'a/p')).toBe(CloseCode.roomForbidden)
  })

  it('refuses with unavailable (retried by clients) when the rule throws', async () => {
    const url = await startRelay('throws', {
      authorize: async () => {
        throw new Error('directory offline')
      },
    })
    expect(await joinRoom(url, 'a', 'a/p')).toBe(CloseCode.unavailable)
  })

  it('throws a TypeError at createRelay for an authorize that is not a function', () => {
    const store = openSqliteStore(mkdtempSync(join(tmpdir(), 'engram-create-relay-invalid-')))
    stops.push(async () => {
      await store.close()
    })
    expect(() => createRelay({ secret, store, authorize: 'a/*' as unknown as Authorize })).toThrow(/authorize must be a function.*got string/)
  })
})
