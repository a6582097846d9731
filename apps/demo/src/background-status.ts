import type { MemoryStatus, StatusWarning } from '@engram/core'

/** The background parts of the store whose failures the demo shows. */
const PARTS = ['embedder', 'summarizer', 'extractor', 'sync'] as const

/** Records of a `stamps_ahead` warning the line names (the warning's message says how many there are). */
const LISTED = 3

/**
 * The warnings the store shows now, one line: this device's clock is wrong (`clock`), or records
 * arrived with stamps far ahead of it (`stamps_ahead`, with the first records and the devices
 * that wrote them); undefined when there are none.
 */
export function backgroundWarnings(status: MemoryStatus): string | undefined {
  return status.warnings.length === 0 ? undefined : status.warnings.map(describeWarning).join(' · ')
}

function describeWarning(w: StatusWarning): string {
  if (w.type !== 'stamps_ahead') return w.message
  const listed = w.records.slice(0, LISTED).map((r) => `${r.kind} ${r.name ?? r.id} (device ${r.deviceId})`)
  return `${w.message} Records: ${listed.join(', ')}${w.count > LISTED ? `, and ${w.count - LISTED} more` : ''}.`
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
