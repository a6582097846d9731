import type { Fanout } from '../cluster/fanout.js'
import type { Logger } from '../log.js'
import { errorMessage } from '../log.js'
import type { RelayStore } from '../storage/persistence.js'

/** Users whose tokens issued before some time are refused. */
export interface RevocationList {
  /** Resolves once the store's revocations were read (at startup). */
  readonly ready: Promise<void>
  /** Whether a token of `user` issued at `issuedAtMs` is revoked. */
  isRevoked(user: string, issuedAtMs: number): boolean
  stop(): void
}

/** Where revocations come from and whom to tell. */
export interface RevocationListOptions {
  store: RelayStore
  fanout: Fanout
  log: Logger
  /** Milliseconds between rereads of the store. */
  pollMs: number
  /** A revocation was learnt: close the user's live connections whose token it covers. */
  onRevoked(user: string, atMs: number): void
}

/**
 * Keep the relay's revocations: read from the store at startup and every
 * `pollMs` (so `engram-relay revoke` reaches a relay with no Redis), and
 * taken from the fanout as soon as any instance hears of one.
 */
export function createRevocationList(options: RevocationListOptions): RevocationList {
  const revoked = new Map<string, number>()
  const learn = (user: string, atMs: number): void => {
    if (!Number.isFinite(atMs) || (revoked.get(user) ?? -Infinity) >= atMs) return
    revoked.set(user, atMs)
    options.log.info('tokens revoked', { user, before: new Date(atMs).toISOString() })
    options.onRevoked(user, atMs)
  }
  let failing = false
  const poll = async (): Promise<void> => {
    try {
      for (const [user, atMs] of await options.store.revocations()) learn(user, atMs)
      failing = false
    } catch (err) {
      if (!failing) options.log.warn('reading revocations failed', { error: errorMessage(err) })
      failing = true
    }
  }
  const ready = poll()
  const timer = setInterval(() => {
    void poll()
  }, options.pollMs)
  timer.unref()
  const stopListening = options.fanout.onRevocation(learn)
  return {
    ready,
    isRevoked: (user, issuedAtMs) => issuedAtMs <= (revoked.get(user) ?? -Infinity),
    stop() {
      clearInterval(timer)
      stopListening()
    },
  }
}
