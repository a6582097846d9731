import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, sep } from 'node:path'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
}

/** A static file server on 127.0.0.1. */
export interface StaticServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  close(): Promise<void>
}

/** Options of {@link serveStatic}. */
export interface ServeOptions {
  /** Send COOP/COEP so pages are cross-origin isolated (fine-grained `performance.now()` for benchmarks). */
  isolated?: boolean
}

/** Serves `root` on 127.0.0.1 at a free port (no caching, no directory listing). */
export async function serveStatic(root: string, options: ServeOptions = {}): Promise<StaticServer> {
  const isolation = options.isolated ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {}
  const base = normalize(root + sep)
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)
      const file = normalize(join(base, path.endsWith('/') ? `${path}index.html` : path))
      if (!file.startsWith(base)) return void res.writeHead(403).end()
      const info = await stat(file).catch(() => undefined)
      if (!info?.isFile()) return void res.writeHead(404).end('not found')
      res.writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
        'content-length': info.size,
        ...isolation,
      })
      createReadStream(file).pipe(res)
    })().catch(() => res.writeHead(500).end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
