import { parseArgs } from 'node:util'
import { defaultLimits } from './limits.js'
import type { RelayLimits } from './limits.js'
import type { LogLevel } from './log.js'
import type { SqliteSync } from './persistence-sqlite.js'

/** Used when no secret is configured; the relay logs a warning and refuses it in production. */
export const developmentSecret = 'engram-relay-development-secret-change-me'

/** What `main` was asked to do. */
export type CliCommand =
  | { kind: 'serve'; host: string; port: number; data: string; secret: string; devSecret: boolean; sync: SqliteSync; logLevel: LogLevel; limits: RelayLimits }
  | { kind: 'token'; user: string; ttlSeconds: number; secret: string; devSecret: boolean }
  | { kind: 'help' }

/** Flag name → limit key; each is also read from `ENGRAM_RELAY_<FLAG_IN_SNAKE_CASE>`. */
const limitFlags: Record<string, keyof RelayLimits> = {
  'max-message-bytes': 'maxMessageBytes',
  'messages-per-second': 'messagesPerSecond',
  'message-burst': 'messageBurst',
  'max-connections-per-user': 'maxConnectionsPerUser',
  'max-connections': 'maxConnections',
  'upgrades-per-second': 'upgradesPerSecond',
  'upgrade-burst': 'upgradeBurst',
  'max-document-bytes': 'maxDocumentBytes',
  'max-buffered-bytes': 'maxBufferedBytes',
  'unload-after-ms': 'unloadAfterMs',
  'compact-after-updates': 'compactAfterUpdates',
  'ping-interval-ms': 'pingIntervalMs',
}

const envName = (flag: string): string => 'ENGRAM_RELAY_' + flag.toUpperCase().replaceAll('-', '_')

/** Usage text for `--help`. */
export const usage = `engram-relay [serve] [--host 127.0.0.1] [--port 1234] [--data ./.data/relay] [--secret S]
                   [--sync normal|full] [--log-level info] [--${Object.keys(limitFlags).join(' N] [--')} N]
engram-relay token --user u1 [--ttl 3600] [--secret S]
Every flag can also be set as ENGRAM_RELAY_<FLAG> (e.g. ENGRAM_RELAY_SECRET, ENGRAM_RELAY_PORT).`

function toNumber(name: string, value: string): number {
  const n = Number(value)
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got "${value}"`)
  return n
}

/**
 * Parse argv and environment into a command. Flags win over environment,
 * environment over defaults.
 *
 * @throws Error when a flag has an invalid value.
 */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv): CliCommand {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      data: { type: 'string' },
      secret: { type: 'string' },
      sync: { type: 'string' },
      'log-level': { type: 'string' },
      user: { type: 'string' },
      ttl: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(Object.keys(limitFlags).map((f) => [f, { type: 'string' as const }])),
    },
  })
  const flags = values as Record<string, string | boolean | undefined>
  const read = (flag: string): string | undefined => {
    const v = flags[flag]
    return typeof v === 'string' ? v : env[envName(flag)]
  }
  const command = positionals[0] ?? 'serve'
  if (values.help === true || command === 'help') return { kind: 'help' }
  const configured = read('secret')
  const secret = configured ?? developmentSecret
  const devSecret = configured === undefined
  if (command === 'token') {
    const user = values.user
    if (user === undefined || user === '' || user.includes('/')) throw new Error('token: --user <id> is required and may not contain "/"')
    return { kind: 'token', user, ttlSeconds: toNumber('ttl', values.ttl ?? '3600'), secret, devSecret }
  }
  if (command !== 'serve') throw new Error(`unknown command "${command}"\n${usage}`)
  const limits: RelayLimits = { ...defaultLimits }
  for (const [flag, key] of Object.entries(limitFlags)) {
    const value = read(flag)
    if (value !== undefined) limits[key] = toNumber(flag, value)
  }
  const sync = read('sync') ?? 'normal'
  if (sync !== 'normal' && sync !== 'full') throw new Error('--sync must be "normal" or "full"')
  const logLevel = read('log-level') ?? 'info'
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) throw new Error('--log-level must be debug, info, warn or error')
  return {
    kind: 'serve',
    host: read('host') ?? '127.0.0.1',
    port: toNumber('port', read('port') ?? env.PORT ?? '1234'),
    data: read('data') ?? './.data/relay',
    secret,
    devSecret,
    sync,
    logLevel: logLevel as LogLevel,
    limits,
  }
}
