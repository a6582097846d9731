import { describe, expect, it } from 'vitest'
import { SignJWT } from 'jose'
import { CloseCode } from '@engram/sync/close-codes'
import { authenticate, roomFromPath } from './authenticate.js'
import { mayJoin } from './authorize.js'
import { importVerifyKey, mintToken, secretKey, verifyToken } from './tokens.js'

const secret = 'unit-test-secret-0123456789abcdef'
const key = secretKey(secret)

describe('verifyToken', () => {
  it('accepts a minted token and returns its user', async () => {
    expect(await verifyToken(await mintToken(secret, 'u1'), key)).toMatchObject({ ok: true, user: 'u1', readOnly: false })
  })
  it('reads the read-only scope and checks aud and iss when configured', async () => {
    expect(await verifyToken(await mintToken(secret, 'u1', 60, { scope: 'read' }), key)).toMatchObject({ ok: true, readOnly: true })
    const checks = { audience: 'engram', issuer: 'https://app.example' }
    expect(await verifyToken(await mintToken(secret, 'u1', 60, checks), key, checks)).toMatchObject({ ok: true, user: 'u1' })
    expect(await verifyToken(await mintToken(secret, 'u1', 60), key, checks)).toEqual({ ok: false, reason: 'tokenInvalid' })
    expect(await verifyToken(await mintToken(secret, 'u1', 60, { ...checks, audience: 'other' }), key, checks)).toEqual({ ok: false, reason: 'tokenInvalid' })
    expect(await verifyToken(await mintToken(secret, 'u1', 60, { ...checks, issuer: 'evil' }), key, checks)).toEqual({ ok: false, reason: 'tokenInvalid' })
  })
  it('verifies with a pre-imported WebCrypto key', async () => {
    const imported = await importVerifyKey(secret)
    expect(await verifyToken(await mintToken(secret, 'u1'), imported)).toMatchObject({ ok: true, user: 'u1' })
    expect(await verifyToken(await mintToken('other-secret-0123456789abcdef', 'u1'), imported)).toEqual({ ok: false, reason: 'tokenInvalid' })
  })
  type Case = [name: string, make: () => Promise<string | null>, reason: 'tokenMissing' | 'tokenInvalid' | 'tokenExpired']
  const cases: Case[] = [
    ['missing', async (): Promise<string | null> => null, 'tokenMissing'],
    ['empty', async (): Promise<string | null> => '', 'tokenMissing'],
    ['garbage', async (): Promise<string | null> => 'abc', 'tokenInvalid'],
    ['wrong secret', async (): Promise<string | null> => await mintToken('other-secret-0123456789abcdef', 'u1'), 'tokenInvalid'],
    ['expired', async (): Promise<string | null> => await mintToken(secret, 'u1', -5), 'tokenExpired'],
    ['no exp', async (): Promise<string | null> => await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('u1').sign(key), 'tokenInvalid'],
    [
      'no sub',
      async (): Promise<string | null> => await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(key),
      'tokenInvalid',
    ],
    [
      'sub with a slash',
      async (): Promise<string | null> => await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('a/b').setExpirationTime('1h').sign(key),
      'tokenInvalid',
    ],
    ['alg none', async (): Promise<string | null> => 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1MSIsImV4cCI6OTk5OTk5OTk5OX0.', 'tokenInvalid'],
  ]
  it.each(cases)('refuses a %s token', async (_name, make, reason) => {
    expect(await verifyToken(await make(), key)).toEqual({ ok: false, reason })
  })
})

describe('rooms', () => {
  it('lets a user join only <user>/… rooms', () => {
    expect(mayJoin('u1', 'u1/p')).toBe(true)
    expect(mayJoin('u1', 'u1/p/q')).toBe(true)
    expect(mayJoin('u1', 'u1/')).toBe(false)
    expect(mayJoin('u1', 'u1')).toBe(false)
    expect(mayJoin('u1', 'u10/p')).toBe(false)
    expect(mayJoin('u1', 'u2/p')).toBe(false)
    expect(mayJoin('u1/x', 'u1/x/p')).toBe(false)
    expect(mayJoin('u1/x', 'u1%2Fx/p')).toBe(true)
  })
  it('decodes room paths and rejects bad ones', () => {
    expect(roomFromPath('/u1/my%20project')).toBe('u1/my%20project')
    expect(roomFromPath('/u1/%61')).toBe('u1/a')
    // One document per room: an encoded `/` stays inside its segment.
    expect(roomFromPath('/u1/a/b%2Fc')).toBe('u1/a/b%2Fc')
    expect(roomFromPath('/u1/a%2Fb/c')).toBe('u1/a%2Fb/c')
    expect(roomFromPath('/u1//c')).toBeNull()
    expect(roomFromPath('/u1')).toBe('u1')
    expect(roomFromPath('/')).toBeNull()
    expect(roomFromPath('/%E0%A4%A')).toBeNull()
    expect(roomFromPath('/u1/a%00b')).toBeNull()
    expect(roomFromPath('/u1/' + 'x'.repeat(600))).toBeNull()
  })
  it('checks the token before the room and maps each failure to its close code', async () => {
    const token = await mintToken(secret, 'u1')
    expect(await authenticate(`/u1/p?token=${token}`, key)).toMatchObject({ ok: true, user: 'u1', room: 'u1/p' })
    expect(await authenticate(`/u2/p?token=${token}`, key)).toMatchObject({ ok: false, code: CloseCode.roomForbidden })
    expect(await authenticate('/u2/p', key)).toMatchObject({ ok: false, code: CloseCode.tokenMissing })
    expect(await authenticate(`/%zz?token=${token}`, key)).toMatchObject({ ok: false, code: CloseCode.roomInvalid })
  })
  it('refuses to mint tokens for users containing "/"', async () => {
    await expect(mintToken(secret, 'a/b')).rejects.toThrow(TypeError)
  })
})
