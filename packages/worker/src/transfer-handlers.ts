import * as Comlink from 'comlink'
import { isMemoryErrorCode, MemoryError } from '@engram/core'

/** A structured-clonable summary of an error (or of any thrown value). */
export interface ErrorSummary {
  name: string
  message: string
  code?: string
  stack?: string
  cause?: ErrorSummary
}

/** Marks a thrown MemoryError on the wire (a plain string key: it must survive structured cloning). */
const ENGRAM_WIRE = 'engramMemoryError'
interface ThrownWire {
  [ENGRAM_WIRE]: ErrorSummary
}
const isEngramWire = (wire: unknown): wire is ThrownWire => typeof wire === 'object' && wire !== null && ENGRAM_WIRE in wire

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
 * Installs Engram's Comlink transfer handlers (idempotent): a thrown `MemoryError`
 * keeps its class, `code`, message and a cause summary in both directions; other
 * thrown values travel exactly as Comlink sends them (the client turns those into
 * `MemoryError('internal')` for Engram calls only).
 * Called by `exposeMemory` and `connectMemory`; call it yourself only when you
 * use Comlink directly with Engram objects.
 */
export function installTransferHandlers(): void {
  if (installed) return
  installed = true
  const original = Comlink.transferHandlers.get('throw')!
  // Only a thrown MemoryError gets Engram's wire format; everything else (other Comlink
  // workers of the app included) goes through Comlink's own handler unchanged.
  const throwHandler: Comlink.TransferHandler<{ value: unknown }, ThrownWire | unknown> = {
    canHandle: (value): value is { value: unknown } => original.canHandle(value),
    serialize: (thrown) => (thrown.value instanceof MemoryError ? [{ [ENGRAM_WIRE]: summarizeError(thrown.value) }, []] : original.serialize(thrown)),
    deserialize: (wire) => {
      if (isEngramWire(wire)) throw reviveError(wire[ENGRAM_WIRE])
      return original.deserialize(wire) as { value: unknown }
    },
  }
  Comlink.transferHandlers.set('throw', throwHandler as Comlink.TransferHandler<unknown, unknown>)
  Comlink.transferHandlers.set('memory-error', memoryErrorHandler as Comlink.TransferHandler<unknown, unknown>)
}
