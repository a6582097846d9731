/*
 * The text entities and relations are indexed and shown as: one place, read by the kinds when
 * they write their documents, by the index rebuild and by the hits that show them.
 */

/** What an entity's text is made of. */
export interface EntityTextParts {
  name: string
  type: string
  aliases: readonly string[]
  observations: readonly string[]
}

/** The text of an entity: `name (type)`, then its aliases and observations, one a line. */
export function entityText(e: EntityTextParts): string {
  return [`${e.name} (${e.type})`, ...e.aliases, ...e.observations].join('\n')
}

/** A predicate as words: `works_at` → `works at`. */
export function predicateWords(predicate: string): string {
  return predicate.replace(/[_-]+/g, ' ').trim()
}

/** The text of a relation, in words: `Dana works at Initech`. */
export function relationText(subject: string, predicate: string, object: string): string {
  return `${subject} ${predicateWords(predicate)} ${object}`
}

/** The stored fields the texts of entities and relations are read from (the kinds' rows hold more). */
export interface KnowledgeRowParts {
  entity: EntityTextParts & { id: string; projectId: string; createdAt: number; deletedAt?: number; mergedInto?: string }
  relation: {
    id: string
    projectId: string
    subjectId: string
    predicate: string
    objectId?: string
    value?: string | number | boolean
    validFrom: number
    deletedAt?: number
  }
}

/** The text of a relation row, its entities' names looked up in `names` (an id stands for a name it lacks). */
export function relationRowText(row: KnowledgeRowParts['relation'], names: ReadonlyMap<string, string>): string {
  const object = row.objectId === undefined ? String(row.value) : (names.get(row.objectId) ?? row.objectId)
  return relationText(names.get(row.subjectId) ?? row.subjectId, row.predicate, object)
}
