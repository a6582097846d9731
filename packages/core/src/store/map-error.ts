import { MemoryError } from './errors.js'

/**
 * Turns any failure from IndexedDB, Dexie or a DOMException into a
 * {@link MemoryError}. Dexie wraps DOMExceptions in its own error classes;
 * both carry a `name` we can map, and the original is kept as `cause`.
 */
export function mapError(error: unknown): MemoryError {
  if (error instanceof MemoryError) return error
  const name = errorName(error)
  const inner = innerName(error)
  const detail = error instanceof Error ? error.message : String(error)
  if (name === 'QuotaExceededError' || inner === 'QuotaExceededError') {
    return new MemoryError('quota_exceeded', `The browser refused to store more data (storage quota exceeded): ${detail}`, { cause: error })
  }
  if (name === 'DatabaseClosedError' || name === 'InvalidStateError' || inner === 'InvalidStateError') {
    return new MemoryError('closed', `The memory store is closed: ${detail}`, { cause: error })
  }
  if (name === 'VersionError' || inner === 'VersionError' || name === 'UpgradeError') {
    return new MemoryError('conflict', `The database was written by a newer version of Engram; update the app: ${detail}`, { cause: error })
  }
  if (name === 'ConstraintError' || inner === 'ConstraintError') {
    return new MemoryError('conflict', `A record with that key already exists: ${detail}`, { cause: error })
  }
  if (name === 'DataCloneError' || inner === 'DataCloneError' || name === 'DataError') {
    return new MemoryError('invalid_input', `The value cannot be stored in IndexedDB: ${detail}`, { cause: error })
  }
  if (name === 'MissingAPIError') {
    return new MemoryError('invalid_input', `IndexedDB is not available here; pass indexedDB and IDBKeyRange to openMemory(): ${detail}`, { cause: error })
  }
  if (name === 'AbortError' && error instanceof Error && error.cause !== undefined) {
    return mapError(error.cause)
  }
  return new MemoryError('internal', `Unexpected storage failure: ${detail}`, { cause: error })
}

function errorName(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'name' in error ? String(error.name) : undefined
}

/** Dexie keeps the DOMException it wraps on `inner`. */
function innerName(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'inner' in error ? errorName(error.inner) : undefined
}
