import { afterAll, beforeAll, expect, it } from 'vitest'
import { request } from 'node:http'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { serveDemo } from '../scripts/demo-server.js'
import type { DemoServer } from '../scripts/demo-server.js'

let demo: DemoServer
let port: number
beforeAll(async () => {
  demo = await serveDemo({ root: mkdtempSync(join(tmpdir(), 'engram-demo-')), relayUrl: () => 'ws://127.0.0.1:1', secret: 'dev-token-test-secret-0123456789' })
  port = Number(new URL(demo.url).port)
})
afterAll(async () => {
  await demo.close()
})

/** GET /dev-token with exactly these Host and Origin headers (fetch cannot set Host). */
const devToken = async (host: string, origin?: string): Promise<number> =>
  await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/dev-token?user=u1', headers: { host, ...(origin === undefined ? {} : { origin }) } }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end()
  })

it("serves /dev-token to 127.0.0.1 and localhost at the demo's port, from the demo's origin", async () => {
  expect(await devToken(`127.0.0.1:${port}`)).toBe(200)
  expect(await devToken(`localhost:${port}`)).toBe(200)
  expect(await devToken(`127.0.0.1:${port}`, `http://127.0.0.1:${port}`)).toBe(200)
  expect(await devToken(`localhost:${port}`, `http://localhost:${port}`)).toBe(200)
})

it('refuses other Host headers (DNS rebinding) and other origins with 403', async () => {
  expect(await devToken(`rebind.attacker.example:${port}`)).toBe(403)
  expect(await devToken('127.0.0.1')).toBe(403)
  expect(await devToken(`127.0.0.1:${port + 1}`)).toBe(403)
  expect(await devToken(`127.0.0.1:${port}`, 'http://rebind.attacker.example')).toBe(403)
  expect(await devToken(`127.0.0.1:${port}`, 'null')).toBe(403)
})
