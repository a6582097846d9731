import type { ChangeKind, Context } from '@engram/core'
import type { DemoMemory } from './connect.js'
import type { SyncStatusSource } from './sync-status.js'

/** What the panels share: the remote memory, who and where we are, and the selection. */
export interface App {
  readonly memory: DemoMemory
  readonly userId: string
  /** The label of this "device" (`?device=A`). */
  readonly device: string
  readonly sync: SyncStatusSource
  /** The selected project. */
  projectId: string
  /** The chat session of the selected project, once there is one. */
  sessionId: string | undefined
  /** Calls `listener` on every selection change (`projectChanged` when another project was picked); returns its unsubscribe. */
  onSelect(listener: (projectChanged: boolean) => void): () => void
  select(selection: { projectId?: string; sessionId?: string | undefined }): void
  /** Calls `listener` (debounced) when memory of these kinds changes, local or remote. */
  onMemoryChange(kinds: ChangeKind[], listener: () => void): void
  /** Shows an error in the global status region. */
  report(error: unknown, action: string): void
  /** Shows a built context in the context preview panel. */
  preview(context: Context, budget: number, label: string): void
}

/** The code of a MemoryError (or the name of another error), for messages. */
export function errorText(error: unknown): string {
  if (error !== null && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown }
    const text = typeof message === 'string' ? message : String(error)
    return typeof code === 'string' ? `${code}: ${text}` : text
  }
  return String(error)
}

/**
 * Which of `fields` a MemoryError is about: the store's validation messages
 * start with the name of the input they refuse (`key is …`, `value is … bytes
 * as JSON …`, `tags …`). Returns `fallback` when the message names none.
 */
export function errorField<T extends string>(error: unknown, fields: readonly T[], fallback: T): T {
  const message = error !== null && typeof error === 'object' ? (error as { message?: unknown }).message : undefined
  if (typeof message !== 'string') return fallback
  return fields.find((name) => new RegExp(`^${name}\\b`, 'i').test(message)) ?? fallback
}
