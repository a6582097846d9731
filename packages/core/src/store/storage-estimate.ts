/*
 * What the browser says about the origin's storage: bytes used and the quota
 * (`navigator.storage.estimate()`), and whether its data is persistent
 * (`navigator.storage.persist()`). Both exist in windows and workers; in Node
 * and other hosts without them, the estimate is absent and persist is false.
 */

/** The origin's storage as the browser estimates it (all of the origin's data, not only this store). */
export interface StorageEstimate {
  /** Bytes the origin uses. */
  usedBytes: number
  /** Bytes the origin may use before writes fail with `quota_exceeded`. */
  quotaBytes: number
  /** Whether the browser keeps the origin's data under storage pressure (`navigator.storage.persisted()`); absent where it cannot tell. */
  persisted?: boolean
}

type StorageManagerLike = {
  estimate?: () => Promise<{ usage?: number; quota?: number }>
  persist?: () => Promise<boolean>
  persisted?: () => Promise<boolean>
}

function storageManager(): StorageManagerLike | undefined {
  return (globalThis as { navigator?: { storage?: StorageManagerLike } }).navigator?.storage
}

/** The browser's estimate of the origin's usage and quota, when it gives one. */
export async function estimateStorage(): Promise<StorageEstimate | undefined> {
  const estimate = storageManager()?.estimate
  if (typeof estimate !== 'function') return undefined
  try {
    const [e, persisted] = await Promise.all([estimate.call(storageManager()), isPersisted()])
    if (typeof e.usage !== 'number' || typeof e.quota !== 'number') return undefined
    const out: StorageEstimate = { usedBytes: e.usage, quotaBytes: e.quota }
    if (persisted !== undefined) out.persisted = persisted
    return out
  } catch {
    // Opaque origins and some embedded contexts refuse: the estimate is then simply unknown.
    return undefined
  }
}

/** Whether the origin's data is persistent, when the browser says (`navigator.storage.persisted()`). */
async function isPersisted(): Promise<boolean | undefined> {
  const persisted = storageManager()?.persisted
  if (typeof persisted !== 'function') return undefined
  try {
    return (await persisted.call(storageManager())) === true
  } catch {
    return undefined
  }
}

/**
 * Asks the browser to keep the origin's data under storage pressure
 * (`navigator.storage.persist()`); true when it is persistent. Browsers may
 * decide without asking the user; outside a browser it is always false.
 */
export async function requestPersistence(): Promise<boolean> {
  const persist = storageManager()?.persist
  if (typeof persist !== 'function') return false
  try {
    return (await persist.call(storageManager())) === true
  } catch {
    return false
  }
}
