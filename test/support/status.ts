import type { Memory, MemoryStatus } from '@engram/core'

/**
 * Resolves with the first background status of `memory` (the current one
 * included) that passes `test`: waits for status events, never for time.
 */
export async function statusWhere(memory: Pick<Memory, 'status'>, test: (status: MemoryStatus) => boolean): Promise<MemoryStatus> {
  let found!: (status: MemoryStatus) => void
  const match = new Promise<MemoryStatus>((resolve) => {
    found = resolve
  })
  const off = await memory.status.subscribe((status) => {
    if (test(status)) found(status)
  })
  const now = await memory.status.get()
  if (test(now)) found(now)
  try {
    return await match
  } finally {
    await off()
  }
}
