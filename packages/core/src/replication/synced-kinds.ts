import { syncedBlocks } from '../blocks/blocks-sync.js'
import { syncedFacts } from '../facts/facts-sync.js'
import { syncedMessages } from '../messages/messages-sync.js'
import { syncedSessions } from '../sessions/sessions-sync.js'
import { syncedPatterns } from '../patterns/patterns-sync.js'
import { syncedArtifacts } from '../artifacts/artifacts-sync.js'
import { syncedSummaries } from '../summaries/summaries-sync.js'
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
