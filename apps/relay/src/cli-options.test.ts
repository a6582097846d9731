import { expect, it } from 'vitest'
import { developmentSecret, parseCli } from './cli-options.js'
import { defaultLimits } from './limits.js'

it('defaults to 127.0.0.1:1234, ./.data/relay and the flagged development secret', () => {
  expect(parseCli([], {})).toEqual({
    kind: 'serve',
    host: '127.0.0.1',
    port: 1234,
    data: './.data/relay',
    secret: developmentSecret,
    devSecret: true,
    sync: 'normal',
    logLevel: 'info',
    limits: defaultLimits,
  })
})

it('reads environment, and flags win over it', () => {
  const cmd = parseCli(['--port', '9000', '--max-message-bytes', '2048'], {
    ENGRAM_RELAY_PORT: '8000',
    ENGRAM_RELAY_HOST: '0.0.0.0',
    ENGRAM_RELAY_SECRET: 's3cret',
    ENGRAM_RELAY_UNLOAD_AFTER_MS: '0',
  })
  expect(cmd).toMatchObject({ kind: 'serve', port: 9000, host: '0.0.0.0', secret: 's3cret', devSecret: false })
  if (cmd.kind !== 'serve') throw new Error('expected serve')
  expect(cmd.limits).toMatchObject({ maxMessageBytes: 2048, unloadAfterMs: 0 })
})

it('parses the token subcommand', () => {
  expect(parseCli(['token', '--user', 'u1', '--ttl', '60'], {})).toMatchObject({ kind: 'token', user: 'u1', ttlSeconds: 60 })
  expect(() => parseCli(['token'], {})).toThrow(/--user/)
})

it('rejects bad values', () => {
  expect(() => parseCli(['--port', 'x'], {})).toThrow(/--port/)
  expect(() => parseCli(['--sync', 'sometimes'], {})).toThrow(/--sync/)
  expect(() => parseCli(['launch'], {})).toThrow(/unknown command/)
})
