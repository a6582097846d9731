import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { renderMetrics } from './metrics.js'
import type { RelayGauges, RelayMetrics } from './metrics.js'

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
function hasBearer(req: IncomingMessage, token: string): boolean {
  const expected = Buffer.from(`Bearer ${token}`)
  const given = Buffer.from(req.headers.authorization ?? '')
  return given.byteLength === expected.byteLength && timingSafeEqual(given, expected)
}

/**
 * Serve `/healthz` and `/metrics`; returns false for any other path so the
 * caller can answer it (404, or its own routes). With `metricsToken`,
 * `/metrics` answers 401 without `Authorization: Bearer <metricsToken>`.
 */
export function handleHttp(
  req: IncomingMessage,
  res: ServerResponse,
  state: { metrics: RelayMetrics; gauges: () => RelayGauges; closing: () => boolean; metricsToken?: string },
): boolean {
  const path = (req.url ?? '/').split('?')[0]
  if (req.method !== 'GET' && req.method !== 'HEAD') return false
  if (path === '/healthz') {
    const closing = state.closing()
    res.writeHead(closing ? 503 : 200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    res.end(JSON.stringify({ status: closing ? 'closing' : 'ok', ...state.gauges() }))
    return true
  }
  if (path === '/metrics') {
    if (state.metricsToken !== undefined && !hasBearer(req, state.metricsToken)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer', 'cache-control': 'no-store' })
      res.end('metrics require a bearer token\n')
      return true
    }
    // Diagnostics: under `node --expose-gc`, `?gc=1` collects garbage first so heap figures are comparable.
    const gc = (globalThis as { gc?: () => void }).gc
    if (typeof gc === 'function' && (req.url ?? '').includes('gc=1')) gc()
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', 'cache-control': 'no-store' })
    res.end(renderMetrics(state.metrics, state.gauges()))
    return true
  }
  return false
}
