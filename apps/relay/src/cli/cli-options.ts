import { parseArgs } from 'node:util'
import { resolveLimits } from '../limits/limits.js'
import type { RelayLimits } from '../limits/limits.js'
import { envName, flags, limitFlags } from './flags.js'
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

/** What `parseArgs` is given: every flag of {@link flags}, and `--help` / `-h`. */
export const parserOptions = {
  ...Object.fromEntries(Object.entries(flags).map(([name, spec]) => [name, { type: spec.arg === undefined ? ('boolean' as const) : ('string' as const) }])),
  help: { type: 'boolean' as const, short: 'h' },
}

function toNumber(name: string, value: string): number {
  const n = Number(value)
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got "${value}"`)
  return n
}

const secondsPer: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

/** Seconds in `3600`, `90s`, `15m`, `1h` or `7d`. */
function toSeconds(name: string, value: string): number {
  const match = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(value.trim())
  if (match === null) throw new Error(`--${name} must be seconds or a duration like 90s, 15m, 1h or 7d, got "${value}"`)
  return Math.round(Number(match[1]) * (secondsPer[match[2]!] ?? 1))
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
    options: parserOptions,
  })
  const given = values as Record<string, string | boolean | undefined>
  const read = (flag: string): string | undefined => {
    const v = given[flag]
    if (typeof v === 'string') return v
    return flags[flag]?.env === true ? env[envName(flag)] : undefined
  }
  const command = positionals[0] ?? 'serve'
  if (given.help === true || command === 'help') return { kind: 'help' }
  const nonEmpty = (flag: string): string | undefined => {
    const value = read(flag)
    if (value === '') throw new Error(`--${flag} may not be empty`)
    return value
  }
  // An empty secret would be an empty HMAC key: anyone could mint tokens.
  const configured = nonEmpty('secret')
  const secret = configured ?? developmentSecret
  const devSecret = configured === undefined
  const userFlag = (name: string): string => {
    const user = given.user
    if (typeof user === 'boolean') throw new Error(`${name}: --user needs a value`)
    if (user === undefined || user === '' || user.includes('/')) throw new Error(`${name}: --user <id> is required and may not contain "/"`)
    return user
  }
  if (command === 'token') {
    const scope = read('scope')
    if (scope !== undefined && scope !== 'read' && scope !== 'write') throw new Error('--scope must be "read" or "write"')
    return {
      kind: 'token',
      user: userFlag('token'),
      ttlSeconds: toSeconds('ttl', read('ttl') ?? '1h'),
      secret,
      devSecret,
      ...(scope === undefined ? {} : { scope }),
      ...optional('audience', nonEmpty('token-audience')),
      ...optional('issuer', nonEmpty('token-issuer')),
    }
  }
  const storage = parseStorage(read, nonEmpty)
  if (command === 'revoke') return { kind: 'revoke', user: userFlag('revoke'), ...storage }
  if (command !== 'serve') throw new Error(`unknown command "${command}" (engram-relay --help lists the commands)`)
  const limitValues: Partial<RelayLimits> = {}
  for (const [flag, { key }] of Object.entries(limitFlags)) {
    const value = read(flag)
    if (value !== undefined) limitValues[key] = toNumber(flag, value)
  }
  const limits = resolveLimits(limitValues)
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
    integrityCheck: given['integrity-check'] === true || ['1', 'true'].includes(env.ENGRAM_RELAY_INTEGRITY_CHECK ?? ''),
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
