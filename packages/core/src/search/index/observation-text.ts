import type { IndexedDoc } from '../../store/store-context.js'

/*
 * The search document of an observation: one place, read by the observations kind when it
 * writes, by sync, by the index rebuild, by a dump's import and by the hits that show them.
 */

/** The stored fields an observation's search document is made of (the kind's row holds more). */
export interface ObservationDocParts {
  id: string
  projectId: string
  sessionId: string
  text: string
  observedAt: number
  supersededAt?: number
  deletedAt?: number
}

/**
 * Whether an observation has a search document: not purged and not condensed by a reflection
 * (an expired one keeps its document until the sweep purges it; search leaves it out at once).
 */
export function isSearchableObservation(row: ObservationDocParts): boolean {
  return row.deletedAt === undefined && row.supersededAt === undefined
}

/** The search-index document of an observation: its text, in its session, dated by what it observes. */
export function observationDoc(row: ObservationDocParts): IndexedDoc {
  return { docId: `observation:${row.id}`, kind: 'observation', projectId: row.projectId, sessionId: row.sessionId, text: row.text, createdAt: row.observedAt }
}
