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
