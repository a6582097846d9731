import { Dexie } from 'dexie'
import { maxKey } from '../store/keys.js'
import type { Origin } from '../store/change-feed.js'
import type { FactVersion } from './facts.js'
import type { FactRow, FactVersionRow } from '../store/rows.js'
import type { StoreContext } from '../store/store-context.js'
import type { Json } from '../store/validate.js'

/*
 * Every state a fact has been in is one FactVersionRow, numbered 1, 2, 3… per
 * (projectId, key) without gaps. A version is valid from its write time until
 * the next version's write time (validTo); the newest one is open.
 */

/**
 * Appends the version for `row` (its `version`, value and deleted state) and
 * closes the previous version at the new version's `validFrom` (= row.updatedAt).
 * Call inside a write transaction over `factVersions`. `latest` is the key's newest
 * stored version when the caller read it already (see {@link latestVersion}): when it
 * is the previous one, it is closed without reading it again.
 */
export function appendVersion(ctx: StoreContext, row: FactRow, origin: Origin, latest?: FactVersionRow): Promise<void> {
  const validFrom = row.updatedAt
  const version: FactVersionRow = {
    projectId: row.projectId,
    key: row.key,
    version: row.version,
    value: row.value,
    validFrom,
    deleted: row.deletedAt !== undefined,
    confidence: row.confidence,
    hlc: row.hlc,
    origin,
  }
  if (row.source !== undefined) version.source = row.source
  const known = latest !== undefined && latest.version === row.version - 1
  // The read of the previous version and the new version's put go out together (one round trip);
  // a Dexie promise chain, so it may run beside the caller's other requests.
  return Dexie.Promise.all([
    known ? latest : row.version > 1 ? ctx.db.factVersions.get([row.projectId, row.key, row.version - 1]) : undefined,
    ctx.db.factVersions.put(version),
  ]).then(([previous]) =>
    previous && previous.validTo === undefined ? ctx.db.factVersions.put({ ...previous, validTo: validFrom }).then(() => undefined) : undefined,
  )
}

/** The newest stored version of one key (a Dexie promise chain). */
export function latestVersion(ctx: StoreContext, projectId: string, key: string): Promise<FactVersionRow | undefined> {
  return ctx.db.factVersions.where('[projectId+key+version]').between([projectId, key, Dexie.minKey], [projectId, key, maxKey()]).last()
}

/** All stored versions of one key, oldest first. */
export function versionsOf(ctx: StoreContext, projectId: string, key: string): Promise<FactVersionRow[]> {
  return ctx.db.factVersions.where('[projectId+key+version]').between([projectId, key, Dexie.minKey], [projectId, key, maxKey()]).toArray()
}

/** Deletes every version of one key (purge). */
export function deleteVersionsOf(ctx: StoreContext, projectId: string, key: string): Promise<number> {
  return ctx.db.factVersions.where('[projectId+key+version]').between([projectId, key, Dexie.minKey], [projectId, key, maxKey()]).delete()
}

/** The public shape of a version row. */
export function toFactVersion(row: FactVersionRow): FactVersion {
  const version: FactVersion = {
    key: row.key,
    value: row.value,
    version: row.version,
    validFrom: row.validFrom,
    deleted: row.deleted,
    confidence: row.confidence,
  }
  if (row.validTo !== undefined) version.validTo = row.validTo
  if (row.source !== undefined) version.source = { ...row.source }
  return version
}

/**
 * The value believed at `time`: the newest version whose interval
 * [validFrom, validTo) holds `time`; undefined before the first version, while
 * the key was deleted, or when there is no history.
 */
export function valueAt(versions: readonly FactVersionRow[], time: number): Json | undefined {
  let found: FactVersionRow | undefined
  for (const v of versions) {
    if (v.validFrom <= time && (v.validTo === undefined || time < v.validTo) && (!found || v.version > found.version)) found = v
  }
  return found && !found.deleted ? found.value : undefined
}
