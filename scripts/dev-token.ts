import { SignJWT } from 'jose'

/**
 * Mints a relay token `{ sub: userId, iat, exp }` (HS256) — what a production
 * app's backend does after it has authenticated the user. Development only here:
 * the demo server hands these out to anyone who asks.
 *
 * @throws TypeError when `userId` is empty or contains `/` (rooms are `<userId>/…`).
 */
export async function mintDevToken(secret: string, userId: string, ttlSeconds = 3600): Promise<string> {
  if (userId === '' || userId.includes('/')) throw new TypeError('userId must be non-empty and contain no "/"')
  const now = Math.floor(Date.now() / 1000)
  return await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(new TextEncoder().encode(secret))
}
