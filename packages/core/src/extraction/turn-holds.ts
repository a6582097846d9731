/**
 * Turns in flight, per project: from `turns.begin` until `turns.end` has recorded the reply
 * (and queued its job), the turn holds the project's extraction jobs, so a job never reads a
 * turn whose prompt is written and whose reply is not. A hold is bounded: one older than the
 * hold time (a turn begun and never ended, an app that crashed mid-turn) holds nothing.
 */
export interface TurnHolds {
  /** A turn of `projectId` began (`key` names it). */
  hold(projectId: string, key: string): void
  /** The turn ended, or its begin failed. */
  release(projectId: string, key: string): void
  /** Releases every hold of a project whose key starts with `prefix` except `keep` (a later turn of a session began: the earlier ones are interrupted). */
  releaseOthers(projectId: string, prefix: string, keep: string): void
  /** Resolves once no turn of the project is in flight, or after `maxMs` at most. */
  whenIdle(projectId: string, maxMs: number): Promise<void>
  /** Drops every hold and wakes every waiter (on close). */
  clear(): void
}

/** Creates the turn holds of one store. `now` is wall time (holds are bounded in real time). */
export function createTurnHolds(now: () => number = Date.now): TurnHolds {
  const holds = new Map<string, Map<string, number>>()
  const waiters = new Set<() => void>()
  const wake = () => {
    for (const w of [...waiters]) w()
  }

  function live(projectId: string, since: number): number | undefined {
    const held = holds.get(projectId)
    if (!held) return undefined
    let earliest: number | undefined
    for (const at of held.values()) if (at > since && (earliest === undefined || at < earliest)) earliest = at
    return earliest
  }

  return {
    hold(projectId, key) {
      let held = holds.get(projectId)
      if (!held) holds.set(projectId, (held = new Map()))
      if (!held.has(key)) held.set(key, now())
    },
    release(projectId, key) {
      const held = holds.get(projectId)
      if (!held?.delete(key)) return
      if (held.size === 0) holds.delete(projectId)
      wake()
    },
    releaseOthers(projectId, prefix, keep) {
      const held = holds.get(projectId)
      if (!held) return
      let any = false
      for (const key of [...held.keys()]) if (key !== keep && key.startsWith(prefix)) any = held.delete(key) || any
      if (held.size === 0) holds.delete(projectId)
      if (any) wake()
    },
    async whenIdle(projectId, maxMs) {
      const deadline = now() + maxMs
      for (;;) {
        const t = now()
        const earliest = live(projectId, t - maxMs)
        if (earliest === undefined || t >= deadline) return
        // Wait for a release, the oldest hold's expiry, or the deadline, whichever comes first.
        const wait = Math.max(1, Math.min(deadline, earliest + maxMs) - t)
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer)
            waiters.delete(done)
            resolve()
          }
          const timer = setTimeout(done, wait)
          waiters.add(done)
        })
      }
    },
    clear() {
      holds.clear()
      wake()
    },
  }
}
