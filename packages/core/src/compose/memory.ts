import type { ArchiveApi } from '../archive/archive.js'
import type { BlocksApi } from '../blocks/blocks.js'
import type { ChangesApi } from '../store/change-feed.js'
import type { ContextApi } from '../context/context.js'
import type { EncryptionApi } from '../encryption/api.js'
import type { Dump, Stats } from '../dump/dump.js'
import type { FactsApi } from '../facts/facts.js'
import type { MessagesApi } from '../messages/messages.js'
import type { ProjectsApi } from '../projects/projects.js'
import type { JournalApi } from '../runtime/journal.js'
import type { LessonsApi } from '../runtime/lessons.js'
import type { LimitationsApi } from '../limitations/limitations.js'
import type { PatternsApi } from '../patterns/patterns.js'
import type { SpacesApi } from '../spaces/spaces.js'
import type { ArtifactsApi } from '../artifacts/artifacts.js'
import type { PeopleApi } from '../people/people.js'
import type { EntitiesApi } from '../entities/entities.js'
import type { RelationsApi } from '../relations/relations.js'
import type { AdoptResult } from '../replication/adopt.js'
import type { RunsApi } from '../runtime/runs.js'
import type { TasksApi } from '../runtime/tasks.js'
import type { TurnsApi } from '../runtime/turns.js'
import type { ExtractionApi } from '../extraction/extraction-queue.js'
import type { ObservationsApi } from '../observations/observations.js'
import type { UsageApi } from '../runtime/usage.js'
import type { SearchFn } from '../search/search.js'
import type { SessionsApi } from '../sessions/sessions.js'
import type { SummariesApi } from '../summaries/summaries.js'
import type { StatusApi } from '../store/status.js'
import type { SyncApi } from '../replication/sync-api.js'

/**
 * A memory store: every namespace of docs/api.md. `openMemory()` returns it in
 * process; `connectMemory()` of `@engram/worker` returns the very same type
 * across a worker boundary (every method returns a Promise in both).
 * After `close()`, every method of every namespace fails with `closed`; failures
 * are always a `MemoryError` (see each namespace for its codes).
 */
export interface Memory {
  readonly appId: string
  readonly userId: string
  /** The stable id of this device's store (made on first open). */
  readonly deviceId: string
  /** Where the store runs: `local` in this thread (`openMemory`), or the worker kind `connectMemory` reached. */
  readonly mode: 'local' | 'dedicated' | 'shared' | 'port'
  readonly projects: ProjectsApi
  readonly facts: FactsApi
  readonly blocks: BlocksApi
  readonly sessions: SessionsApi
  readonly messages: MessagesApi
  readonly summaries: SummariesApi
  readonly archive: ArchiveApi
  readonly search: SearchFn
  readonly context: ContextApi
  readonly journal: JournalApi
  readonly runs: RunsApi
  readonly tasks: TasksApi
  readonly usage: UsageApi
  readonly lessons: LessonsApi
  readonly turns: TurnsApi
  /** The background extraction queue (a `BackgroundExtractor` such as `aiExtractor`): `flush()` waits for it. */
  readonly extraction: ExtractionApi
  /** Observations of long sessions (observational memory), written by a background extractor's observer and reflector. */
  readonly observations: ObservationsApi
  /** What the agent knows it cannot do yet (store-wide). */
  readonly limitations: LimitationsApi
  /** What the agent noticed the user tends to do, per project; synced like facts. */
  readonly patterns: PatternsApi
  /** Groups of projects; a space's sync setting is the default of its new projects. */
  readonly spaces: SpacesApi
  /** Files agents produced, as Blobs on the device; metadata syncs with the project. */
  readonly artifacts: ArtifactsApi
  /** One person, several identities: aliases resolved to a canonical id, and who was welcomed. */
  readonly people: PeopleApi
  /** Named things of a type with aliases and observations, per project; synced like facts. */
  readonly entities: EntitiesApi
  /** Subject — predicate — object with validity windows, per project; synced like facts. */
  readonly relations: RelationsApi
  /**
   * Merges another local user's database of the same app (an anonymous user who signed in) into this
   * store in one transaction — kept kinds merged like an import, mirrored kinds by latest clock — and
   * records `otherUserId` as an alias of this user. The other database stays readable. Idempotent.
   * @throws MemoryError `invalid_input`, `not_found` (no such database), `conflict`, `quota_exceeded`, `closed`.
   */
  adopt(otherUserId: string): Promise<AdoptResult>
  readonly changes: ChangesApi
  /** Background state (embedder, summarizer, extractor, sync) and its failures, in one place. */
  readonly status: StatusApi
  /** At-rest encryption of the local store: status, `enable`, `rekey` (docs/encryption.md). */
  readonly encryption: EncryptionApi
  /** Sync state; sync is started by `startSync` (page) or `connectMemory({ sync })` (worker). */
  readonly sync: SyncApi
  /** Counts and UTF-8 size of one project or the whole store. @throws MemoryError `not_found` (project), `invalid_input`, `closed`. */
  stats(projectId?: string): Promise<Stats>
  /** A versioned JSON-safe dump of one project or the whole store. @throws MemoryError `not_found` (project), `invalid_input`, `closed`. */
  export(projectId?: string): Promise<Dump>
  /**
   * Writes a dump in one transaction (`merge` upserts, `replace` clears its scope first).
   * @throws MemoryError `invalid_input` (malformed dump, dangling references, bad mode), `quota_exceeded`, `closed`.
   */
  import(dump: Dump, options: { mode: 'merge' | 'replace' }): Promise<{ written: number }>
  /** Closes the store (through a worker: leaves it, ending a dedicated worker); later calls fail with `closed`. Idempotent. */
  close(): Promise<void>
  /** Asks the browser to keep this origin's data under storage pressure (`navigator.storage.persist()`); true when persistent, false where not granted or not a browser. */
  persist(): Promise<boolean>
  /** True once close() was called. */
  readonly closed: boolean
}
