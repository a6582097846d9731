import type { Fanout } from '../cluster/fanout.js'
import type { RelayStore } from '../storage/persistence.js'

/**
 * `engram-relay revoke --user u1`: refuse every token of `user` issued until
 * now. Written to the store (every instance rereads it, and it survives
 * restarts) and, with Redis, announced so live connections close at once.
 * The user's app mints a fresh token to reconnect.
 */
export async function revokeUser(
  user: string,
  store: RelayStore,
  fanout: Fanout | null,
  now = Date.now(),
): Promise<{ at: number; announced: boolean; error?: string }> {
  await store.revoke(user, now)
  if (fanout === null) return { at: now, announced: false }
  try {
    await fanout.publishRevocation(user, now)
    return { at: now, announced: true }
  } catch (err) {
    // Stored all the same: every instance rereads revocations every second.
    return { at: now, announced: false, error: err instanceof Error ? err.message : String(err) }
  }
}
