export { openMemory, databaseName, type MemoryOptions } from './open-memory.js'
export { createMemory, type BaseMemoryOptions, type CreateMemoryOptions } from './create-memory.js'
export type { Memory } from './memory.js'
export type { SyncableMemory, MemoryModule, ModuleContext, AnyModule, ComposedMemory, BaseKeys, ModuleKeys, KeysOf, KeysOfModule } from './module.js'
export { factsModule } from './modules/facts-module.js'
export { conversationsModule } from './modules/conversations-module.js'
export { archiveModule } from './modules/archive-module.js'
export { searchModule, type SearchModuleOptions } from './modules/search-module.js'
export { contextModule, type ContextModuleOptions } from './modules/context-module.js'
export { runtimeModule, type RuntimeModuleOptions } from './modules/runtime-module.js'
export { importerModule } from './modules/importer-module.js'
export { limitationsModule } from './modules/limitations-module.js'
export { patternsModule } from './modules/patterns-module.js'
export { spacesModule } from './modules/spaces-module.js'
export { artifactsModule, type ArtifactsModuleOptions } from './modules/artifacts-module.js'
export { peopleModule } from './modules/people-module.js'
export type { Page, PageOptions } from './paging.js'
export type { StatusApi, MemoryStatus, ComponentStatus, BackgroundProblem, BackgroundSource, SyncState, Unsubscribe } from './status.js'
export type { SyncApi, SyncEngine, SyncStateDetails, SyncProjectDetails, SyncRecordProblem } from './sync-api.js'
export { MemoryError, isMemoryError, isMemoryErrorCode, type MemoryErrorCode } from './errors.js'
export { mapError } from './map-error.js'
export { reportError } from './report-error.js'
export { newId } from './ids.js'
export {
  createHybridClock,
  compareHlc,
  formatHlc,
  parseHlc,
  readHlc,
  isHlc,
  checkHlc,
  DEFAULT_MAX_CLOCK_LEAD_MS,
  type HybridClock,
  type HlcParts,
  type StampVerdict,
} from './hlc.js'
export { estimateTokenizer, type Tokenizer } from './token-estimate.js'
export { USER_PROJECT, type Embedder, type IndexedDoc } from './store-context.js'
export type { Json } from './validate.js'
export type { Source, OutboxRow } from './schema.js'
export type { Change, ChangeKind, ChangeFilter, ChangesApi, Origin } from './change-feed.js'
export type { Project, ProjectSync, ProjectsApi } from './projects.js'
export type { ReplicationApi, PendingReplication, ApplyResult, ApplyRemoteOptions } from './replication.js'
export { replicationOf } from './replication-seam.js'
export { MIRRORED_KINDS, CONVERSATION_KINDS, PROJECT_DOC_KINDS, type MirroredKind, type ConversationKind } from './mirrored-kinds.js'
export type { MirroredRecord } from './synced-kind.js'
export type { Fact, FactVersion, FactsApi, SetFactOptions, ListFactsOptions } from './facts.js'
export type { Block, BlocksApi, SetBlockOptions } from './blocks.js'
export type { Session, SessionsApi, ListSessionsOptions, CreateSessionOptions } from './sessions.js'
export type { Message, MessageInput, MessagesApi, Role } from './messages.js'
export type { Summary, SummaryInput, ListSummariesOptions, SummariesApi } from './summaries.js'
export type { Passage, ArchiveApi, CreatePassageOptions } from './archive.js'
export type { Hit, HitKind, SearchOptions, SearchFn } from './search/search.js'
export { createAnalyzer, englishAnalyzer, foldText, type Analyzer, type AnalyzerOptions } from './search/analyzer.js'
export type { Context, ContextApi, BuildContextOptions, SectionName, Summarizer } from './context/context.js'
export type { Stats, Dump, DumpApi } from './dump.js'
export type { ImportApi } from './dump-importer.js'
export type { StorageEstimate } from './storage-estimate.js'
export type {
  JournalRecord,
  JournalEntry,
  JournalApi,
  JournalSnapshot,
  JournalPageOptions,
  JournalSessionInfo,
  ListJournalSessionsOptions,
} from './runtime/journal.js'
export type { Checkpoint, CheckpointInput, ToolEvent, ToolEventInput, Run, RunsApi } from './runtime/runs.js'
export type { Task, TaskInput, ListTasksOptions, Repeat, TasksApi } from './runtime/tasks.js'
export type { UsageSummary, UsageRecord, UsageEntry, UsageApi, ModelPrice, PricingTable } from './runtime/usage.js'
export type { Lesson, LessonsApi, Outcome, OutcomeInput, ListOutcomesOptions } from './runtime/lessons.js'
export type {
  TurnsApi,
  TurnBeginInput,
  TurnEndInput,
  TurnPartialInput,
  TurnEndResult,
  Extractor,
  MemoryOperation,
  Exchange,
  MemoryView,
} from './runtime/turns.js'
export type { Limitation, LimitationInput, LimitationsApi } from './limitations.js'
export type { Pattern, PatternsApi, ObservePatternOptions, ListPatternsOptions } from './patterns.js'
export type { Space, SpaceInput, SpacesApi } from './spaces.js'
export type { Artifact, ArtifactWithData, ArtifactInput, ArtifactsApi, ListArtifactsOptions } from './artifacts.js'
export type { PeopleApi } from './people.js'
export type { AdoptResult } from './adopt.js'
export { checkEncryptionOption, deriveMemoryKey, MEMORY_KEY_ITERATIONS, type EncryptionOptions } from './encryption/key-option.js'
export type { EncryptionApi, EncryptionStatus } from './encryption/api.js'
export { atRestCipherOf, verifyAtRestKey, type AtRestCipher } from './encryption/at-rest-seam.js'
