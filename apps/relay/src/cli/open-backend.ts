import { resolve } from 'node:path'
import type { StorageConfig } from './cli-options.js'
import type { Fanout } from '../cluster/fanout.js'
import type { Logger } from '../log.js'
import type { FanoutStats } from '../cluster/redis-fanout.js'
import { openRedisFanout } from '../cluster/redis-fanout.js'
import type { RelayStore } from '../storage/persistence.js'
import { openPostgresStore } from '../storage/persistence-postgres.js'
import { openSqliteStore } from '../storage/persistence-sqlite.js'

/** The store and the fanout a configuration names. */
export interface Backend {
  store: RelayStore
  fanout: Fanout | null
  /** Where the documents are, for the log (never a password). */
  describe: Record<string, string>
}

/** The URL without its password, for logs. */
function redact(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(unparseable url)'
  }
}

/**
 * Open the store (`sqlite` in `data`, or `postgres`) and, with `redis`, the
 * fanout between instances.
 *
 * @throws Error when PostgreSQL cannot be reached or its tables cannot be created.
 */
export async function openBackend(config: StorageConfig, instanceId: string, log: Logger, stats?: FanoutStats): Promise<Backend> {
  const store =
    config.store === 'postgres'
      ? await openPostgresStore({ url: config.postgres ?? '', log })
      : openSqliteStore(resolve(config.data), { sync: config.sync, walLimitBytes: config.walLimitBytes })
  const fanout = config.redis === undefined ? null : openRedisFanout({ url: config.redis, instanceId, log, ...(stats === undefined ? {} : { stats }) })
  const describe: Record<string, string> =
    config.store === 'postgres'
      ? { store: 'postgres', postgres: redact(config.postgres ?? '') }
      : { store: 'sqlite', data: resolve(config.data), sync: config.sync }
  if (config.redis !== undefined) describe.redis = redact(config.redis)
  return { store, fanout, describe }
}
