import { parseArgs } from 'node:util'
import { defaultLimits } from '../limits/limits.js'
import type { RelayLimits } from '../limits/limits.js'
import type { LogLevel } from '../log.js'
import type { SqliteSync } from '../storage/persistence-sqlite.js'

/** Used when no secret is configured; the relay logs a warning and refuses it in production. */
export const developmentSecret = 'engram-relay-development-secret-change-me'

/** Where documents are stored, and how instances hear each other. */
export interface StorageConfig {
  store: 'sqlite' | 'postgres'
  /** SQLite folder (`--store sqlite`). */
  data: string
  sync: SqliteSync
  /** Bytes the SQLite write-ahead log is cut back to after each checkpoint. */
  walLimitBytes: number
  /** PostgreSQL connection URL (`--store postgres`). */
  postgres?: string
  /** Redis URL: instances exchange updates, awareness and revocations through it. */
  redis?: string
}

/** What `main` was asked to do. */
export type CliCommand =
  | ({
      kind: 'serve'
      host: string
      port: number
      secret: string
      devSecret: boolean
      logLevel: LogLevel
      limits: RelayLimits
      instanceId?: string
      tokenAudience?: string
      tokenIssuer?: string
      metricsToken?: string
      integrityCheck: boolean
    } & StorageConfig)
  | { kind: 'token'; user: string; ttlSeconds: number; secret: string; devSecret: boolean; scope?: 'read' | 'write'; audience?: string; issuer?: string }
  | ({ kind: 'revoke'; user: string } & StorageConfig)
  | { kind: 'help' }

/** The `serve` command: everything the relay is started with. */
export type ServeCommand = Extract<CliCommand, { kind: 'serve' }>

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
  'max-awareness-bytes-per-connection': 'maxAwarenessBytesPerConnection',
  'max-awareness-bytes-per-room': 'maxAwarenessBytesPerRoom',
  'awareness-bytes-per-second': 'awarenessBytesPerSecond',
  'max-rooms-per-user': 'maxRoomsPerUser',
  'max-bytes-per-user': 'maxBytesPerUser',
}

const envName = (flag: string): string => 'ENGRAM_RELAY_' + flag.toUpperCase().replaceAll('-', '_')

/** Usage text for `--help`. */
export const usage = `engram-relay [serve] [--host 127.0.0.1] [--port 1234] [--secret S] [--log-level info]
                   [--store sqlite|postgres] [--data ./.data/relay] [--sync normal|full] [--wal-limit-bytes N]
                   [--postgres postgres://…] [--redis redis://…] [--instance-id ID]
                   [--token-audience AUD] [--token-issuer ISS] [--metrics-token T] [--integrity-check]
                   [--${Object.keys(limitFlags).join(' N] [--')} N]
engram-relay token --user u1 [--ttl 3600] [--scope read|write] [--token-audience AUD] [--token-issuer ISS] [--secret S]
engram-relay revoke --user u1 [--store sqlite --data DIR | --store postgres --postgres URL] [--redis URL]
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
      store: { type: 'string' },
      postgres: { type: 'string' },
      redis: { type: 'string' },
      'instance-id': { type: 'string' },
      'wal-limit-bytes': { type: 'string' },
      'token-audience': { type: 'string' },
      'token-issuer': { type: 'string' },
      'metrics-token': { type: 'string' },
      'integrity-check': { type: 'boolean' },
      user: { type: 'string' },
      ttl: { type: 'string' },
      scope: { type: 'string' },
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
  const nonEmpty = (flag: string): string | undefined => {
    const value = read(flag)
    if (value === '') throw new Error(`--${flag} may not be empty`)
    return value
  }
  const userFlag = (name: string): string => {
    const user = values.user
    if (user === undefined || user === '' || user.includes('/')) throw new Error(`${name}: --user <id> is required and may not contain "/"`)
    return user
  }
  if (command === 'token') {
    const scope = values.scope
    if (scope !== undefined && scope !== 'read' && scope !== 'write') throw new Error('--scope must be "read" or "write"')
    return {
      kind: 'token',
      user: userFlag('token'),
      ttlSeconds: toNumber('ttl', values.ttl ?? '3600'),
      secret,
      devSecret,
      ...(scope === undefined ? {} : { scope }),
      ...optional('audience', nonEmpty('token-audience')),
      ...optional('issuer', nonEmpty('token-issuer')),
    }
  }
  const storage = parseStorage(read, nonEmpty)
  if (command === 'revoke') return { kind: 'revoke', user: userFlag('revoke'), ...storage }
  if (command !== 'serve') throw new Error(`unknown command "${command}"\n${usage}`)
  const limits: RelayLimits = { ...defaultLimits }
  for (const [flag, key] of Object.entries(limitFlags)) {
    const value = read(flag)
    if (value !== undefined) limits[key] = toNumber(flag, value)
  }
  const logLevel = read('log-level') ?? 'info'
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) throw new Error('--log-level must be debug, info, warn or error')
  const instanceId = nonEmpty('instance-id')
  if (instanceId !== undefined && Buffer.byteLength(instanceId) > 255) throw new Error('--instance-id must be at most 255 bytes')
  return {
    kind: 'serve',
    host: read('host') ?? '127.0.0.1',
    port: toNumber('port', read('port') ?? env.PORT ?? '1234'),
    secret,
    devSecret,
    logLevel: logLevel as LogLevel,
    limits,
    ...storage,
    ...optional('instanceId', instanceId),
    ...optional('tokenAudience', nonEmpty('token-audience')),
    ...optional('tokenIssuer', nonEmpty('token-issuer')),
    ...optional('metricsToken', nonEmpty('metrics-token')),
    integrityCheck: values['integrity-check'] === true || ['1', 'true'].includes(env.ENGRAM_RELAY_INTEGRITY_CHECK ?? ''),
  }
}

/** `{ [key]: value }` when the value is set, else nothing (exactOptionalPropertyTypes-friendly). */
function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string }
}

function parseStorage(read: (flag: string) => string | undefined, nonEmpty: (flag: string) => string | undefined): StorageConfig {
  const store = read('store') ?? 'sqlite'
  if (store !== 'sqlite' && store !== 'postgres') throw new Error('--store must be "sqlite" or "postgres"')
  const sync = read('sync') ?? 'normal'
  if (sync !== 'normal' && sync !== 'full') throw new Error('--sync must be "normal" or "full"')
  const postgres = nonEmpty('postgres')
  const redis = nonEmpty('redis')
  if (store === 'postgres' && postgres === undefined) throw new Error('--store postgres needs --postgres <url> (or ENGRAM_RELAY_POSTGRES)')
  if (store === 'sqlite' && postgres !== undefined) throw new Error('--postgres is only used with --store postgres')
  if (postgres !== undefined && !/^postgres(ql)?:\/\//.test(postgres)) throw new Error('--postgres must be a postgres:// URL')
  if (redis !== undefined && !/^rediss?:\/\//.test(redis)) throw new Error('--redis must be a redis:// or rediss:// URL')
  return {
    store,
    data: read('data') ?? './.data/relay',
    sync,
    walLimitBytes: toNumber('wal-limit-bytes', read('wal-limit-bytes') ?? String(64 * 1024 * 1024)),
    ...optional('postgres', postgres),
    ...optional('redis', redis),
  }
}
