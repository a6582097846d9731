/** Reconnect delays: exponential from `initialMs` up to `maxMs`, with jitter. */
export interface BackoffOptions {
  /** First delay, in ms. Default 250. */
  initialMs?: number
  /** Longest delay, in ms. Default 30,000. */
  maxMs?: number
}

/**
 * The delay before reconnect attempt `attempt` (1-based): "equal jitter", a
 * random point in the upper half of the exponential window, so many devices
 * dropped by one relay restart do not reconnect in lockstep.
 *
 * @example backoffDelay(3, { initialMs: 100 }) // between 200 and 400
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const initial = options.initialMs ?? 250
  const max = options.maxMs ?? 30_000
  const window = Math.min(max, initial * 2 ** Math.max(0, attempt - 1))
  return window / 2 + random() * (window / 2)
}
