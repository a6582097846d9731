/**
 * Room names: how the sync client names a document on the relay, and how the
 * relay reads a name back. One module for both sides, so they cannot drift
 * apart.
 *
 * A room name is its segments (user id, project id, and for a conversation a
 * session id), each percent-encoded on its own and joined with `/`. A `/`
 * inside an id is encoded (`%2F`), so `a` + `b/c` (`u/a/b%2Fc`) and `a/b` +
 * `c` (`u/a%2Fb/c`) are two rooms. The relay decodes segment by segment and
 * encodes each again, so every spelling of one name (`%41` for `A`) lands in
 * the same canonical room.
 *
 * A leaf module (no imports): the relay loads it as `@engram/sync/room-name`.
 */

/** The longest canonical room name the relay accepts, in UTF-16 code units. */
export const MAX_ROOM_NAME_LENGTH = 512

/**
 * One segment, percent-encoded: injective for well-formed Unicode (every `/`,
 * `%` and control character is escaped).
 * @throws URIError for a string with a lone surrogate (ids are checked before they get here).
 */
export function encodeRoomSegment(segment: string): string {
  return encodeURIComponent(segment)
}

/**
 * The room of a document: `roomName(userId, projectId)` for a project,
 * `roomName(userId, projectId, sessionId)` for one of its conversations.
 *
 * @example
 * roomName('u1', 'a', 'b/c') // 'u1/a/b%2Fc'
 * roomName('u1', 'a/b', 'c') // 'u1/a%2Fb/c'
 * @throws URIError when a segment holds a lone surrogate.
 */
export function roomName(...segments: readonly string[]): string {
  return segments.map(encodeRoomSegment).join('/')
}

/**
 * The segments of a room name (decoded), or null when it is not one: empty, an
 * empty segment, a segment that does not decode (a lone surrogate does not: it
 * is not UTF-8), or a control character.
 *
 * @example
 * roomPath('u1/a%2Fb/c') // ['u1', 'a/b', 'c']
 */
export function roomPath(name: string): string[] | null {
  if (name === '') return null
  const segments: string[] = []
  for (const raw of name.split('/')) {
    if (raw === '') return null
    let segment: string
    try {
      segment = decodeURIComponent(raw)
    } catch {
      return null
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what a room name must not hold
    if (/[\u0000-\u001f\u007f]/.test(segment)) return null
    segments.push(segment)
  }
  return segments
}

/**
 * The canonical spelling of a room name (each segment decoded and encoded
 * again), or null when it is not a room name or is longer than
 * {@link MAX_ROOM_NAME_LENGTH}.
 *
 * @example
 * canonicalRoomName('u1/%61') // 'u1/a'
 */
export function canonicalRoomName(name: string): string | null {
  const segments = roomPath(name)
  if (segments === null) return null
  const canonical = roomName(...segments)
  return canonical.length > MAX_ROOM_NAME_LENGTH ? null : canonical
}

/**
 * The owner of a canonical room name, as it is spelt in the name (its first
 * segment, encoded): the key the relay counts the owner's quotas under.
 */
export function roomOwnerKey(name: string): string {
  const at = name.indexOf('/')
  return at < 0 ? name : name.slice(0, at)
}
