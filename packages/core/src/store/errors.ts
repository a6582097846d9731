/** The stable codes a {@link MemoryError} carries. They survive the worker boundary. */
export type MemoryErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'conflict'
  | 'read_only'
  | 'limit_exceeded'
  | 'quota_exceeded'
  | 'closed'
  | 'unauthorized'
  | 'crypto'
  | 'internal'

const CODES: ReadonlySet<string> = new Set<MemoryErrorCode>([
  'invalid_input',
  'not_found',
  'conflict',
  'read_only',
  'limit_exceeded',
  'quota_exceeded',
  'closed',
  'unauthorized',
  'crypto',
  'internal',
])

/**
 * The one error type the SDK reports. `code` is stable and safe to branch on;
 * `message` says what to do about it; `cause` keeps the original failure.
 *
 * @example
 * try { await memory.blocks.append('p1', 'persona', text) }
 * catch (e) { if (e instanceof MemoryError && e.code === 'limit_exceeded') trim() }
 */
export class MemoryError extends Error {
  override readonly name = 'MemoryError'
  readonly code: MemoryErrorCode

  constructor(code: MemoryErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
  }
}

/** True when `value` is a {@link MemoryError} (also one rebuilt across a worker boundary). */
export function isMemoryError(value: unknown): value is MemoryError {
  return value instanceof MemoryError
}

/** True when `code` is one of the {@link MemoryErrorCode}s. */
export function isMemoryErrorCode(code: unknown): code is MemoryErrorCode {
  return typeof code === 'string' && CODES.has(code)
}

/** Shorthand for the most common failure: input rejected before anything was written. */
export function invalidInput(message: string): MemoryError {
  return new MemoryError('invalid_input', message)
}
