export { openMemory, databaseName, type MemoryOptions } from './compose/open-memory.js'
export { createMemory, type BaseMemoryOptions, type CreateMemoryOptions } from './compose/create-memory.js'
export type { Memory } from './compose/memory.js'
export type { SyncableMemory, MemoryModule, ModuleContext, AnyModule, ComposedMemory, BaseKeys, ModuleKeys, KeysOf, KeysOfModule } from './store/module.js'
export { factsModule } from './facts/facts-module.js'
export { conversationsModule } from './sessions/conversations-module.js'
export { archiveModule } from './archive/archive-module.js'
export { searchModule, type SearchModuleOptions } from './search/search-module.js'
export { contextModule, type ContextModuleOptions } from './context/context-module.js'
export { runtimeModule, type RuntimeModuleOptions } from './runtime/runtime-module.js'
export { importerModule } from './dump/importer-module.js'
export { limitationsModule } from './limitations/limitations-module.js'
export { patternsModule } from './patterns/patterns-module.js'
export { spacesModule } from './spaces/spaces-module.js'
export { artifactsModule, type ArtifactsModuleOptions } from './artifacts/artifacts-module.js'
export { peopleModule } from './people/people-module.js'
export { knowledgeModule, type KnowledgeModuleOptions } from './relations/knowledge-module.js'
export type { Page, PageOptions } from './store/paging.js'
export type {
  StatusApi,
  MemoryStatus,
  ComponentStatus,
  BackgroundProblem,
  BackgroundSource,
  StatusWarning,
  SyncState,
  Unsubscribe,
  ExtractionQueueStatus,
  ExtractionRejection,
} from './store/status.js'
export { MAX_LISTED_STAMPS_AHEAD, type ClockWarning, type StampsAheadWarning, type StampAheadRecord } from './store/status.js'
export type { SyncApi, SyncEngine, SyncStateDetails, SyncProjectDetails, SyncRecordProblem } from './replication/sync-api.js'
export { MemoryError, isMemoryError, isMemoryErrorCode, type MemoryErrorCode } from './store/errors.js'
export { reportError } from './store/report-error.js'
export { newId } from './store/ids.js'
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
} from './store/hlc.js'
export { estimateTokenizer, type Tokenizer } from './store/token-estimate.js'
export { USER_PROJECT, type Embedder, type IndexedDoc } from './store/store-context.js'
export type { Json } from './store/validate.js'
export type { Source } from './store/rows.js'
export type { Change, ChangeKind, ChangeFilter, ChangesApi, Origin } from './store/change-feed.js'
export type { Project, ProjectSync, ProjectsApi } from './projects/projects.js'
export type { ReplicationApi, PendingReplication, ApplyResult, ApplyRemoteOptions } from './replication/replication.js'
export { MIRRORED_KINDS, CONVERSATION_KINDS, PROJECT_DOC_KINDS, type MirroredKind, type ConversationKind } from './catalog/lists.js'
export type { MirroredRecord } from './store/synced-kind.js'
export type { ClockReading, LearnClockOptions } from './replication/clock-correction.js'
export type { Fact, FactVersion, FactsApi, SetFactOptions, ListFactsOptions } from './facts/facts.js'
export type { Block, BlocksApi, SetBlockOptions } from './blocks/blocks.js'
export type { Session, SessionsApi, ListSessionsOptions, CreateSessionOptions } from './sessions/sessions.js'
export type { Message, MessageInput, MessagesApi, Role } from './messages/messages.js'
export type { Summary, SummaryInput, ListSummariesOptions, SummariesApi } from './summaries/summaries.js'
export type { Passage, ArchiveApi, CreatePassageOptions } from './archive/archive.js'
export type { Hit, HitKind, SearchOptions, SearchFn } from './search/search.js'
export { createAnalyzer, englishAnalyzer, foldText, type Analyzer, type AnalyzerOptions } from './search/analysis/analyzer.js'
export type { Context, ContextApi, BuildContextOptions, SectionName, Summarizer } from './context/context.js'
export type { Stats, Dump, DumpApi } from './dump/dump.js'
export type { ImportApi } from './dump/dump-importer.js'
export type { StorageEstimate } from './store/storage-estimate.js'
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
export type { ExchangeTurn, KnowledgeOperation } from './runtime/turn-extraction.js'
export { escapeMemoryText } from './context/escape.js'
export type {
  BackgroundExtractor,
  ExtractionAnswer,
  ExtractionSettings,
  ModelUsage,
  ObservationAnswer,
  ObservationDraft,
  ObservationInput,
  ObservedMessage,
  ReflectionInput,
} from './extraction/extraction-types.js'
export type { ExtractionApi } from './extraction/extraction-queue.js'
export type { Observation, ObservationsApi, ListObservationsOptions } from './observations/observations.js'
export type { ObservationRow } from './observations/observation-rows.js'
export type { Limitation, LimitationInput, LimitationsApi } from './limitations/limitations.js'
export type { Pattern, PatternsApi, ObservePatternOptions, ListPatternsOptions } from './patterns/patterns.js'
export type { Space, SpaceInput, SpacesApi } from './spaces/spaces.js'
export type { Artifact, ArtifactWithData, ArtifactInput, ArtifactsApi, ListArtifactsOptions } from './artifacts/artifacts.js'
export type { PeopleApi } from './people/people.js'
export type { Entity, EntityInput, EntitiesApi, ListEntitiesOptions, ResolveEntityOptions } from './entities/entities.js'
export type {
  Relation,
  RelationInput,
  RelationsApi,
  RelationQueryOptions,
  AroundOptions,
  Graph,
  ListRelationsOptions,
  Direction,
} from './relations/relations.js'
export type { Literal, Provenance } from './relations/relation-rows.js'
export { SINGLE_VALUED, predicateKey, type Cardinality } from './relations/predicates.js'
export type { AdoptResult } from './replication/adopt.js'
export { checkEncryptionOption, deriveMemoryKey, MEMORY_KEY_ITERATIONS, type EncryptionOptions } from './encryption/key-option.js'
export type { EncryptionApi, EncryptionStatus } from './encryption/api.js'
