import { syncedBlocks } from './blocks-sync.js'
import { syncedFacts } from './facts-sync.js'
import { syncedMessages } from './messages-sync.js'
import { syncedSessions } from './sessions-sync.js'
import { syncedPatterns } from './patterns-sync.js'
import { syncedArtifacts } from './artifacts-sync.js'
import { syncedSummaries } from './summaries-sync.js'
import type { MirroredKind, SyncedKind } from './synced-kind.js'

/** The descriptor of every mirrored kind: the one place replication, import and the outbox read. */
// biome-ignore lint/suspicious/noExplicitAny: each descriptor has its own row type
export const SYNCED_KINDS: Record<MirroredKind, SyncedKind<any>> = {
  facts: syncedFacts,
  blocks: syncedBlocks,
  summaries: syncedSummaries,
  patterns: syncedPatterns,
  artifacts: syncedArtifacts,
  sessions: syncedSessions,
  messages: syncedMessages,
}
