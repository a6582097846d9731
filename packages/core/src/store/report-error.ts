/**
 * Reports an error thrown by app code the SDK calls back (a change listener, a
 * status listener) without letting it break the SDK or the other listeners.
 * Browsers and workers get it through `reportError` (window `error` event,
 * console); elsewhere (Node, Electron's main process) it is logged rather than
 * rethrown, since an uncaught exception would end the process.
 */
export function reportError(error: unknown): void {
  const report = (globalThis as { reportError?: (error: unknown) => void }).reportError
  if (typeof report === 'function') report(error)
  else console.error('[engram] a listener failed:', error)
}
