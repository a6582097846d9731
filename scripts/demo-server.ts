import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { extname, join, normalize, sep } from 'node:path'
import { mintToken } from '@engram/relay'

/** Options of {@link serveDemo}. */
export interface DemoServerOptions {
  /** The built demo (index.html + assets). */
  root: string
  host?: string
  /** 0 picks a free port. */
  port?: number
  /** The relay's WebSocket URL the page should sync through; read on every request. */
  relayUrl: () => string
  /** The relay's signing secret, for `/dev-token` (development only). */
  secret: string
}

/** A running demo server. */
export interface DemoServer {
  readonly url: string
  close(): Promise<void>
}

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
}

const userPattern = /^[A-Za-z0-9_.-]{1,64}$/

/**
 * Serves the built demo on 127.0.0.1 and two development endpoints:
 * `GET /demo-config.json` → `{ relayUrl }` and `GET /dev-token?user=<id>` → `{ token }`.
 * `/dev-token` signs a relay token for whoever asks: never expose it beyond
 * localhost; production apps mint tokens on their authenticated backend.
 *
 * @throws Error when the port is taken.
 */
export async function serveDemo(options: DemoServerOptions): Promise<DemoServer> {
  const host = options.host ?? '127.0.0.1'
  const server = createServer((req, res) => {
    handle(req, res, options).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain', 'internal error\n')
      else res.destroy(err instanceof Error ? err : undefined)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 0)
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

async function handle(req: IncomingMessage, res: ServerResponse, options: DemoServerOptions): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'method not allowed\n')
  const url = new URL(req.url ?? '/', 'http://demo.invalid')
  if (url.pathname === '/demo-config.json') {
    return send(res, 200, 'application/json', JSON.stringify({ relayUrl: options.relayUrl() }))
  }
  if (url.pathname === '/dev-token') {
    const user = url.searchParams.get('user') ?? ''
    if (!userPattern.test(user)) return send(res, 400, 'application/json', JSON.stringify({ error: 'user must match ' + userPattern.source }))
    return send(res, 200, 'application/json', JSON.stringify({ token: await mintToken(options.secret, user) }))
  }
  await sendFile(res, options.root, url.pathname)
}

async function sendFile(res: ServerResponse, root: string, pathname: string): Promise<void> {
  let relative: string
  try {
    relative = normalize(decodeURIComponent(pathname)).replace(/^([/\\])+/, '')
  } catch {
    return send(res, 400, 'text/plain', 'bad path\n')
  }
  if (relative === '' || relative.endsWith(sep)) relative = join(relative, 'index.html')
  const file = join(root, relative)
  if (!file.startsWith(root.endsWith(sep) ? root : root + sep)) return send(res, 404, 'text/plain', 'not found\n')
  const info = await stat(file).catch(() => undefined)
  if (info === undefined || !info.isFile()) return send(res, 404, 'text/plain', 'not found\n')
  const hashed = relative.startsWith('assets' + sep)
  res.writeHead(200, {
    'content-type': types[extname(file)] ?? 'application/octet-stream',
    'content-length': info.size,
    'cache-control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
    'x-content-type-options': 'nosniff',
    // Defence in depth: the demo renders memory as text, and this would stop inline script even if it did not.
    'content-security-policy': "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; object-src 'none'; base-uri 'none'",
  })
  if (res.req.method === 'HEAD') return void res.end()
  createReadStream(file).pipe(res)
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
  res.end(body)
}
