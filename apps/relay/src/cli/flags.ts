import type { RelayLimits } from '../limits/limits.js'

/** Where a flag is shown in `--help`. */
export type FlagGroup = 'serve' | 'storage' | 'tokens' | 'token' | 'limits'

/** One command-line flag: how it is read and how `--help` shows it. */
export interface FlagSpec {
  /** Placeholder of its value; absent for a switch (`--integrity-check`). */
  arg?: string
  /** Whether `ENGRAM_RELAY_<FLAG>` sets it too (a flag wins over the variable). */
  env: boolean
  /** The default, as `--help` shows it. */
  default?: string
  help: string
  group: FlagGroup
}

/** Flag name → limit key and help; each is also read from `ENGRAM_RELAY_<FLAG_IN_SNAKE_CASE>`. */
export const limitFlags: Record<string, { key: keyof RelayLimits; help: string }> = {
  'max-message-bytes': { key: 'maxMessageBytes', help: 'largest frame; a larger one closes with 1009' },
  'messages-per-second': { key: 'messagesPerSecond', help: 'sustained messages per connection; over it closes with 4529' },
  'message-burst': { key: 'messageBurst', help: 'messages per connection in a burst' },
  'max-connections-per-user': { key: 'maxConnectionsPerUser', help: 'open sockets per user; more are refused with 4530' },
  'max-connections': { key: 'maxConnections', help: 'open sockets on the relay; more are refused with 4503' },
  'upgrades-per-second': { key: 'upgradesPerSecond', help: 'connection attempts per remote address; over it refused with 4529' },
  'upgrade-burst': { key: 'upgradeBurst', help: 'connection attempts per remote address in a burst' },
  'max-document-bytes': { key: 'maxDocumentBytes', help: 'stored size of one document; an update past it closes with 4413' },
  'max-buffered-bytes': { key: 'maxBufferedBytes', help: 'bytes queued to one slow reader before it is closed with 4508' },
  'unload-after-ms': { key: 'unloadAfterMs', help: 'a document with no connections is flushed and unloaded after this' },
  'compact-after-updates': { key: 'compactAfterUpdates', help: 'stored updates of one document merged into one snapshot past this' },
  'ping-interval-ms': { key: 'pingIntervalMs', help: 'keep-alive ping period; a socket that missed the previous ping is dropped' },
  'max-awareness-bytes-per-connection': { key: 'maxAwarenessBytesPerConnection', help: 'awareness bytes one connection may hold; more closes with 4414' },
  'max-awareness-bytes-per-room': { key: 'maxAwarenessBytesPerRoom', help: 'awareness bytes one room may hold; more closes with 4414' },
  'mux-messages-per-second': {
    key: 'muxMessagesPerSecond',
    help: 'sustained frames per multiplexed (/mux) socket, all its documents; over it closes with 4529',
  },
  'mux-message-burst': { key: 'muxMessageBurst', help: 'frames per multiplexed socket in a burst' },
  'awareness-bytes-per-second': { key: 'awarenessBytesPerSecond', help: 'awareness bytes one connection may send per second (bursts of 4x)' },
  'max-documents-per-user': {
    key: 'maxDocumentsPerUser',
    help: 'documents one user may have open at once, all sockets; one more is refused with 4405 (closing one frees it)',
  },
  'max-rooms-per-user': { key: 'maxRoomsPerUser', help: 'deprecated: --max-documents-per-user' },
  'max-bytes-per-user': { key: 'maxBytesPerUser', help: 'bytes one user may store, all rooms; an update past it closes with 4407' },
}

/**
 * Every flag the command line knows, except `--help` / `-h`. The parser and
 * `--help` are both built from this table.
 */
export const flags: Record<string, FlagSpec> = {
  host: { arg: 'HOST', env: true, default: '127.0.0.1', help: 'interface to listen on', group: 'serve' },
  port: { arg: 'PORT', env: true, default: '1234', help: 'port to listen on (also PORT); 0 picks a free one', group: 'serve' },
  'log-level': { arg: 'LEVEL', env: true, default: 'info', help: 'debug, info, warn or error', group: 'serve' },
  'instance-id': {
    arg: 'ID',
    env: true,
    default: '<hostname>-<pid>-<random>',
    help: "this instance's name in logs and on Redis (1-255 bytes)",
    group: 'serve',
  },
  'metrics-token': { arg: 'TOKEN', env: true, help: '/metrics answers 401 without "Authorization: Bearer TOKEN"', group: 'serve' },
  'integrity-check': { env: true, help: 'SQLite: check the file at startup and refuse damaged rooms (env: 1 or true)', group: 'serve' },
  store: { arg: 'sqlite|postgres', env: true, default: 'sqlite', help: 'where documents are stored', group: 'storage' },
  data: { arg: 'DIR', env: true, default: './.data/relay', help: 'SQLite: folder of relay.sqlite', group: 'storage' },
  sync: { arg: 'normal|full', env: true, default: 'normal', help: 'SQLite: full also survives power loss (fsync per commit)', group: 'storage' },
  'wal-limit-bytes': { arg: 'N', env: true, default: String(64 * 1024 * 1024), help: 'SQLite: write-ahead log size kept after a checkpoint', group: 'storage' },
  postgres: { arg: 'URL', env: true, help: 'PostgreSQL: postgres://user:pass@host:5432/db (prefer the variable)', group: 'storage' },
  redis: { arg: 'URL', env: true, help: 'redis:// or rediss:// URL carrying updates between instances', group: 'storage' },
  secret: {
    arg: 'SECRET',
    env: true,
    default: 'a development secret, with a warning',
    help: 'HS256 signing secret (prefer the variable: flags show in ps)',
    group: 'tokens',
  },
  'token-audience': { arg: 'AUD', env: true, help: 'require (serve) or set (token) this aud claim', group: 'tokens' },
  'token-issuer': { arg: 'ISS', env: true, help: 'require (serve) or set (token) this iss claim', group: 'tokens' },
  user: { arg: 'ID', env: false, help: 'token, revoke: the user (token sub), without "/"', group: 'token' },
  ttl: { arg: 'DURATION', env: false, default: '1h', help: 'token: lifetime, in seconds or with a unit: 90s, 15m, 1h, 7d', group: 'token' },
  scope: { arg: 'read|write', env: false, default: 'write', help: 'token: read mints a read-only token', group: 'token' },
  ...Object.fromEntries(Object.entries(limitFlags).map(([name, { help }]) => [name, { arg: 'N', env: true, help, group: 'limits' as const }])),
}

/** `ENGRAM_RELAY_MAX_MESSAGE_BYTES` for `max-message-bytes`. */
export function envName(flag: string): string {
  return 'ENGRAM_RELAY_' + flag.toUpperCase().replaceAll('-', '_')
}
