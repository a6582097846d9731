import { archiveKind } from '../archive/kind.js'
import { artifactsKind } from '../artifacts/kind.js'
import { blocksKind } from '../blocks/kind.js'
import { extractionKind } from '../extraction/kind.js'
import { entitiesKind } from '../entities/kind.js'
import { factsKind } from '../facts/kind.js'
import { limitationsKind } from '../limitations/kind.js'
import { messagesKind } from '../messages/kind.js'
import { observationsKind } from '../observations/kind.js'
import { patternsKind } from '../patterns/kind.js'
import { peopleKind } from '../people/kind.js'
import { projectsKind } from '../projects/kind.js'
import { relationsKind } from '../relations/kind.js'
import { runtimeKind } from '../runtime/kind.js'
import { searchKind } from '../search/kind.js'
import { sessionsKind } from '../sessions/kind.js'
import { spacesKind } from '../spaces/kind.js'
import { summariesKind } from '../summaries/kind.js'

/**
 * Every kind the store knows, in the order dumps list their tables: the one place kinds are
 * listed. Every table is declared whatever modules a store is composed from, so opening
 * with fewer modules never migrates.
 */
export const KINDS = [
  spacesKind,
  projectsKind,
  factsKind,
  blocksKind,
  sessionsKind,
  messagesKind,
  summariesKind,
  archiveKind,
  runtimeKind,
  limitationsKind,
  patternsKind,
  artifactsKind,
  peopleKind,
  entitiesKind,
  relationsKind,
  searchKind,
  extractionKind,
  observationsKind,
] as const
