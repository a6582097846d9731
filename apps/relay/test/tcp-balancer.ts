/** Test helper: a TCP load balancer on 127.0.0.1, like a proxy passing WebSocket upgrades to any live relay instance. */
import { connect, createServer } from 'node:net'
import type { Socket } from 'node:net'

/** A running balancer. */
export interface Balancer {
  readonly port: number
  /** ws://127.0.0.1:port */
  readonly wsUrl: string
  close(): Promise<void>
}

/**
 * Forward each connection to the next backend port in turn; a backend that
 * refuses the TCP connection (a killed instance) is skipped, as a health
 * checking load balancer would.
 */
export async function startBalancer(backends: number[]): Promise<Balancer> {
  let next = 0
  const open = new Set<Socket>()
  const pipeTo = (client: Socket, attempt: number): void => {
    if (attempt >= backends.length) {
      client.destroy()
      return
    }
    const port = backends[next++ % backends.length] as number
    const upstream = connect(port, '127.0.0.1')
    upstream.once('connect', () => {
      open.add(upstream)
      client.pipe(upstream).pipe(client)
      upstream.once('close', () => {
        open.delete(upstream)
        client.destroy()
      })
      client.once('close', () => {
        upstream.destroy()
      })
      client.resume()
    })
    upstream.once('error', () => {
      if (!upstream.connecting && open.has(upstream)) return
      upstream.destroy()
      pipeTo(client, attempt + 1)
    })
  }
  const server = createServer({ pauseOnConnect: true }, (client) => {
    open.add(client)
    client.on('error', () => {})
    client.once('close', () => {
      open.delete(client)
    })
    pipeTo(client, 0)
  })
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve)
  })
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  return {
    port,
    wsUrl: `ws://127.0.0.1:${port}`,
    async close() {
      for (const s of open) s.destroy()
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve()
        })
      })
    },
  }
}
