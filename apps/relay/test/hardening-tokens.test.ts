import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SignJWT } from 'jose'
import { connectClient, runCli, startRelay, testSecret, tokenFor, waitFor } from './relay-process.js'
import type { Client, RelayProcess } from './relay-process.js'
import { mintToken } from '../src/auth/tokens.js'
import { CloseCode } from '@engram/sync/close-codes'

let relay: RelayProcess
const clients: Client[] = []
const connect = (target: RelayProcess, room: string, token: string): Client => {
  const c = connectClient(target, room, token)
  clients.push(c)
  return c
}
beforeAll(async () => {
  relay = await startRelay({ args: ['--metrics-token', 'scrape-me'] })
})
afterAll(async () => {
  for (const c of clients) c.destroy()
  await relay.stop()
})
const metricsWith = async (headers: Record<string, string> = { authorization: 'Bearer scrape-me' }): Promise<Response> =>
  await fetch(`${relay.httpUrl}/metrics`, { headers })

describe('tokens', () => {
  it('closes a live connection with 4419 when its token expires', async () => {
    // Expiry has one-second resolution: a 1 s token minted late in a second can lapse before the
    // socket is up (the relay then refuses it at the upgrade, and it never syncs). Three seconds
    // leave at least two for the connection to go live first.
    const client = connect(relay, 'exp/p', await tokenFor('exp', 3))
    await client.synced
    expect(client.provider.wsconnected).toBe(true)
    expect(await client.firstClose).toBe(CloseCode.tokenExpired)
  })

  it('drops document updates from a read-only token and keeps serving it', async () => {
    const writer = connect(relay, 'ro/p', await tokenFor('ro'))
    const viewer = connect(relay, 'ro/p', await mintToken(testSecret, 'ro', 600, { scope: 'read' }))
    await Promise.all([writer.synced, viewer.synced])
    viewer.doc.getMap('m').set('from-viewer', 1)
    writer.doc.getMap('m').set('marker', 1)
    await waitFor(() => viewer.doc.getMap('m').has('marker'), 5000, "the writer's marker at the viewer")
    const late = connect(relay, 'ro/p', await tokenFor('ro'))
    await late.synced
    await waitFor(() => late.doc.getMap('m').has('marker'), 5000, 'the marker at a late joiner')
    expect(late.doc.getMap('m').has('from-viewer')).toBe(false)
    expect(writer.doc.getMap('m').has('from-viewer')).toBe(false)
    expect(viewer.provider.wsconnected).toBe(true)
    const text = await (await metricsWith()).text()
    expect(text).toMatch(/engram_relay_writes_dropped_total [1-9]/)
  })

  it('requires the bearer token on /metrics when --metrics-token is set, but not on /healthz', async () => {
    expect((await metricsWith({})).status).toBe(401)
    expect((await metricsWith({ authorization: 'Bearer wrong' })).status).toBe(401)
    expect((await metricsWith()).status).toBe(200)
    expect((await fetch(`${relay.httpUrl}/healthz`)).status).toBe(200)
  })

  it("revokes a user's live connections with `engram-relay revoke --user` (4420) and refuses their old tokens", async () => {
    const token = await tokenFor('rev')
    const a = connect(relay, 'rev/a', token)
    const b = connect(relay, 'rev/b', token)
    const bystander = connect(relay, 'bystander/a', await tokenFor('bystander'))
    await Promise.all([a.synced, b.synced, bystander.synced])
    const result = await runCli(['revoke', '--user', 'rev', '--data', relay.data])
    expect(result.code).toBe(0)
    expect(result.out).toMatch(/revoked tokens of rev/)
    expect(await a.firstClose).toBe(CloseCode.tokenRevoked)
    expect(await b.firstClose).toBe(CloseCode.tokenRevoked)
    expect(await connect(relay, 'rev/a', token).firstClose).toBe(CloseCode.tokenRevoked)
    expect(bystander.provider.wsconnected).toBe(true)
    // A token issued after the revocation is accepted.
    const fresh = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('rev')
      .setIssuedAt(Math.floor(Date.now() / 1000) + 2)
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(testSecret))
    await connect(relay, 'rev/a', fresh).synced
  })
})

describe('aud and iss', () => {
  it('refuses tokens without the configured audience or issuer', async () => {
    const strict = await startRelay({ args: ['--token-audience', 'engram', '--token-issuer', 'https://app.example'] })
    try {
      const claims = { audience: 'engram', issuer: 'https://app.example' }
      expect(await connect(strict, 'aud/p', await tokenFor('aud')).firstClose).toBe(CloseCode.tokenInvalid)
      expect(await connect(strict, 'aud/p', await mintToken(testSecret, 'aud', 600, { ...claims, audience: 'other' })).firstClose).toBe(CloseCode.tokenInvalid)
      expect(await connect(strict, 'aud/p', await mintToken(testSecret, 'aud', 600, { ...claims, issuer: 'https://evil.example' })).firstClose).toBe(
        CloseCode.tokenInvalid,
      )
      await connect(strict, 'aud/p', await mintToken(testSecret, 'aud', 600, claims)).synced
    } finally {
      await strict.stop()
    }
  })
})
