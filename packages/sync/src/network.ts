/**
 * The global scope as a source of `online` / `offline` events: Window and
 * WorkerGlobalScope fire them; plain Node has no global `addEventListener`.
 * @returns undefined where the global scope is not an event target.
 */
export function defaultNetwork(): EventTarget | undefined {
  const scope = globalThis as { addEventListener?: unknown; removeEventListener?: unknown }
  return typeof scope.addEventListener === 'function' && typeof scope.removeEventListener === 'function' ? (globalThis as unknown as EventTarget) : undefined
}

/**
 * Whether `network` is online now. For the global scope this is
 * `navigator.onLine` (false only when the browser knows it is offline); an
 * injected event target starts online and is then followed by its events.
 */
export function isOnline(network: EventTarget): boolean {
  if (network !== (globalThis as unknown)) return true
  const nav = (globalThis as { navigator?: { onLine?: unknown } }).navigator
  return nav?.onLine !== false
}

/** How often the global `navigator.onLine` is read, for scopes that miss the events. */
const POLL_MS = 1_000

/**
 * Calls `onChange(online)` whenever `network` goes offline or back online.
 * Besides the `online` / `offline` events it reads `navigator.onLine` of the
 * global scope every second: Chromium updates it in dedicated workers without
 * firing the events there (seen under DevTools network emulation).
 * @returns the function that stops watching.
 */
export function watchNetwork(network: EventTarget, onChange: (online: boolean) => void): () => void {
  let last = isOnline(network)
  const report = (online: boolean): void => {
    if (online === last) return
    last = online
    onChange(online)
  }
  const onOnline = (): void => report(true)
  const onOffline = (): void => report(false)
  network.addEventListener('online', onOnline)
  network.addEventListener('offline', onOffline)
  const nav = (globalThis as { navigator?: { onLine?: unknown } }).navigator
  const poll = network === (globalThis as unknown) && typeof nav?.onLine === 'boolean' ? setInterval(() => report(nav.onLine !== false), POLL_MS) : undefined
  return () => {
    network.removeEventListener('online', onOnline)
    network.removeEventListener('offline', onOffline)
    if (poll !== undefined) clearInterval(poll)
  }
}
