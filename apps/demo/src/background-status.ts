import type { MemoryStatus } from '@engram/core'

/** The background parts of the store whose failures the demo shows. */
const PARTS = ['embedder', 'summarizer', 'extractor', 'sync'] as const

/** The warnings the store shows now (e.g. this device's clock is wrong), one line; undefined when there are none. */
export function backgroundWarnings(status: MemoryStatus): string | undefined {
  return status.warnings.length === 0 ? undefined : status.warnings.map((w) => w.message).join(' · ')
}

/**
 * One line naming every failing background part and why, e.g.
 * `extractor failing: the model returned garbage`; undefined when all work.
 */
export function backgroundProblems(status: MemoryStatus): string | undefined {
  const failing = PARTS.filter((part) => status[part].state === 'failing')
  if (failing.length === 0) return undefined
  return failing
    .map((part) => {
      const error = status[part].lastError
      return error ? `${part} failing: ${error.message}` : `${part} failing`
    })
    .join(' · ')
}
