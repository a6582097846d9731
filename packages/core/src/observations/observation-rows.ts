/** A dated, prioritised observation of a session's older messages (observational memory). */
export interface ObservationRow {
  /** Time-sortable id, made on the device that observed. */
  id: string
  projectId: string
  sessionId: string
  text: string
  priority: 'high' | 'medium' | 'low'
  /** When what it observes happened (epoch ms). */
  observedAt: number
  /** The last message it covers: the session's messages after it are the raw tail. */
  throughMessageId: string
  /** 0 for an observer's, n for the n-th reflection's. */
  generation: number
  /** Set when a reflection condensed it into newer observations: it leaves context. */
  supersededAt?: number
  /** After this time it leaves context and search, and the sweep purges it. */
  expiresAt?: number
  createdAt: number
  /** Hybrid logical clock stamp of its last write. */
  hlc: string
  /** A purged observation: a tombstone without text, kept so the purge reaches other devices. */
  deletedAt?: number
}

/** An observation as `memory.observations` returns it. */
export type Observation = Omit<ObservationRow, 'hlc'>

/** Whether an observation is in force at `now`: not superseded, purged or expired. */
export function isActive(row: ObservationRow, now: number): boolean {
  return row.deletedAt === undefined && row.supersededAt === undefined && (row.expiresAt === undefined || row.expiresAt > now)
}

/** The stored row's public shape. */
export function toObservation(row: ObservationRow): Observation {
  const { hlc: _hlc, ...rest } = row
  return rest
}
