import * as Comlink from 'comlink'
import { isMemoryErrorCode, MemoryError } from '@engram/core'

/** A structured-clonable summary of an error (or of any thrown value). */
export interface ErrorSummary { name: string; message: string; code?: string; stack?: string; cause?: ErrorSummary }

interface ThrownWire { summary: ErrorSummary }

const MAX_CAUSE_DEPTH = 3

/** Reduces any thrown value to plain data that survives `postMessage`. */
export function summarizeError(value: unknown, depth = 0): ErrorSummary {
  if (value instanceof Error) {
    const out: ErrorSummary = { name: value.name, message: value.message }
    const code = (value as { code?: unknown }).code
    if (typeof code === 'string') out.code = code
    if (typeof value.stack === 'string') out.stack = value.stack
    if (value.cause !== undefined && depth < MAX_CAUSE_DEPTH) out.cause = summarizeError(value.cause, depth + 1)
    return out
  }
  if (typeof value === 'object' && value !== null && 'message' in value) {
    const v = value as { name?: unknown; message?: unknown; code?: unknown }
    return { name: String(v.name ?? 'Error'), message: String(v.message), ...(typeof v.code === 'string' ? { code: v.code } : {}) }
  }
  return { name: 'Error', message: String(value) }
}

/**
 * Rebuilds an error from its summary on the receiving side. A `MemoryError`
 * comes back as a `MemoryError` with the same code and message; anything else
 * comes back as a `MemoryError` `internal` whose cause keeps the original name,
 * message and stack, so every failure the SDK reports is a `MemoryError`.
 */
export function reviveError(summary: ErrorSummary): MemoryError {
  if (summary.name === 'MemoryError' && isMemoryErrorCode(summary.code)) {
    const error = new MemoryError(summary.code, summary.message, summary.cause ? { cause: reviveCause(summary.cause) } : undefined)
    if (summary.stack) error.stack = `${error.stack ?? ''}\n--- across the worker boundary ---\n${summary.stack}`
    return error
  }
  return new MemoryError('internal', `${summary.name}: ${summary.message}`, { cause: reviveCause(summary) })
}

function reviveCause(summary: ErrorSummary): Error {
  const error = new Error(summary.message, summary.cause ? { cause: reviveCause(summary.cause) } : undefined)
  error.name = summary.name
  if (summary.code !== undefined) Object.assign(error, { code: summary.code })
  if (summary.stack !== undefined) error.stack = summary.stack
  return error
}

/** `MemoryError` returned (not thrown) as a value, e.g. inside a sync status report. */
const memoryErrorHandler: Comlink.TransferHandler<MemoryError, ErrorSummary> = {
  canHandle: (value): value is MemoryError => value instanceof MemoryError,
  serialize: (error) => [summarizeError(error), []],
  deserialize: (summary) => reviveError(summary),
}

let installed = false

/**
 * Installs Engram's Comlink transfer handlers (idempotent): thrown errors keep
 * `MemoryError` class, `code`, message and a cause summary in both directions.
 * Called by `exposeMemory` and `connectMemory`; call it yourself only when you
 * use Comlink directly with Engram objects.
 */
export function installTransferHandlers(): void {
  if (installed) return
  installed = true
  const original = Comlink.transferHandlers.get('throw')!
  // Keep Comlink's own detection of thrown values (its private marker); replace only the wire format.
  const throwHandler: Comlink.TransferHandler<{ value: unknown }, ThrownWire> = {
    canHandle: (value): value is { value: unknown } => original.canHandle(value),
    serialize: ({ value }) => [{ summary: summarizeError(value) }, []],
    deserialize: (wire) => {
      throw reviveError(wire.summary)
    },
  }
  Comlink.transferHandlers.set('throw', throwHandler as Comlink.TransferHandler<unknown, unknown>)
  Comlink.transferHandlers.set('memory-error', memoryErrorHandler as Comlink.TransferHandler<unknown, unknown>)
}
