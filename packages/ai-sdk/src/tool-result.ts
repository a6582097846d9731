import { isMemoryError } from '@engram/core'

/** What a memory tool returns when it fails: something the model can read and act on. */
export interface ToolFailure {
  ok: false
  error: { code: string; message: string }
}

/**
 * Runs a tool's work and turns a failure into a {@link ToolFailure} result
 * instead of a thrown error, so one bad call (a full block, an unknown
 * project) does not end the agent's loop: the model reads why and adapts.
 */
export async function asToolResult<T extends object>(work: () => Promise<T>): Promise<({ ok: true } & T) | ToolFailure> {
  try {
    return { ok: true, ...(await work()) }
  } catch (error) {
    if (isMemoryError(error)) return { ok: false, error: { code: error.code, message: error.message } }
    return { ok: false, error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } }
  }
}
