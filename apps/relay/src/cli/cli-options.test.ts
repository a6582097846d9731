import { expect, it } from 'vitest'
import { developmentSecret, parseCli } from './cli-options.js'
import { defaultLimits } from '../limits/limits.js'

it('defaults to 127.0.0.1:1234, ./.data/relay and the flagged development secret', () => {
  expect(parseCli([], {})).toEqual({
    kind: 'serve',
    host: '127.0.0.1',
    port: 1234,
    store: 'sqlite',
    data: './.data/relay',
    secret: developmentSecret,
    devSecret: true,
    sync: 'normal',
    walLimitBytes: 64 * 1024 * 1024,
    logLevel: 'info',
    limits: defaultLimits,
    integrityCheck: false,
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

it('reads the multi-instance flags and the revoke subcommand', () => {
  expect(parseCli(['--store', 'postgres', '--postgres', 'postgres://db/engram', '--redis', 'redis://r:6379', '--instance-id', 'a'], {})).toMatchObject({
    store: 'postgres',
    postgres: 'postgres://db/engram',
    redis: 'redis://r:6379',
    instanceId: 'a',
  })
  expect(parseCli([], { ENGRAM_RELAY_STORE: 'postgres', ENGRAM_RELAY_POSTGRES: 'postgresql://db/x', ENGRAM_RELAY_METRICS_TOKEN: 'm' })).toMatchObject({
    store: 'postgres',
    metricsToken: 'm',
  })
  expect(parseCli(['revoke', '--user', 'u1', '--data', '/tmp/x'], {})).toMatchObject({ kind: 'revoke', user: 'u1', store: 'sqlite', data: '/tmp/x' })
  expect(parseCli(['token', '--user', 'u1', '--scope', 'read'], {})).toMatchObject({ kind: 'token', scope: 'read' })
})

it('rejects bad values', () => {
  expect(() => parseCli(['--store', 'mysql'], {})).toThrow(/--store/)
  expect(() => parseCli(['--store', 'postgres'], {})).toThrow(/--postgres/)
  expect(() => parseCli(['--postgres', 'postgres://db/x'], {})).toThrow(/only used with --store postgres/)
  expect(() => parseCli(['--redis', 'http://x'], {})).toThrow(/--redis/)
  expect(() => parseCli(['--instance-id', ''], {})).toThrow(/--instance-id/)
  expect(() => parseCli(['revoke'], {})).toThrow(/--user/)
  expect(() => parseCli(['token', '--user', 'u', '--scope', 'admin'], {})).toThrow(/--scope/)
  expect(() => parseCli(['--port', 'x'], {})).toThrow(/--port/)
  expect(() => parseCli(['--sync', 'sometimes'], {})).toThrow(/--sync/)
  expect(() => parseCli(['launch'], {})).toThrow(/unknown command/)
})
