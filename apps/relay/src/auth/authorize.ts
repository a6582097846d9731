import { roomPath } from '@engram/sync/room-name'
import type { TokenGrant } from './tokens.js'

/**
 * Decides whether the holder of a valid token may join a room, after the token
 * was verified and the room name decoded, before anything is loaded. Anything
 * but `true` refuses the connection with `roomForbidden` (4403); a throw or a
 * rejection refuses it with `unavailable` (4503, the client retries) and is
 * logged.
 *
 * Stored bytes and open documents still count against the room's owner, its
 * first segment (`u1/shared` belongs to `u1`).
 *
 * @example
 * // u1 shares u1/team with u2; everyone keeps their own rooms
 * const authorize: Authorize = (grant, room) => defaultAuthorize(grant, room) || (room === 'u1/team' && grant.user === 'u2')
 */
export type Authorize = (grant: TokenGrant, room: string) => boolean | Promise<boolean>

/**
 * Whether `user` may join `room`: only rooms whose first segment is the user
 * (`<user>/<something>`, read segment by segment: a user `a/b` owns `a%2Fb/…`,
 * never `a/b/…`).
 */
export function mayJoin(user: string, room: string): boolean {
  const path = roomPath(room)
  return path !== null && path.length >= 2 && path[0] === user
}

/**
 * The relay's rule when `createRelay` gets no `authorize`: a user reaches only
 * their own rooms, named `<user>/…`.
 */
export function defaultAuthorize(grant: TokenGrant, room: string): boolean {
  return mayJoin(grant.user, room)
}
