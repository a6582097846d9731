/*
 * The list of kinds sync mirrors, apart from the descriptors' checks
 * (synced-kind.ts): every write reads the list to fill the outbox, while the
 * checks load with replication, import and adoption.
 */

/** The memory kinds that sync mirrors between devices. */
export type MirroredKind = 'facts' | 'blocks' | 'summaries' | 'patterns' | 'artifacts' | ConversationKind

/** The kinds that sync only in projects that opt in (`projects.setSync(id, { messages: true })`). */
export type ConversationKind = 'sessions' | 'messages'

/**
 * The kinds every synced project mirrors, in one list (the outbox, the change feed filter,
 * dumps, adoption and the sync mirror read it). Conversations are {@link CONVERSATION_KINDS}.
 */
export const MIRRORED_KINDS: readonly Exclude<MirroredKind, ConversationKind>[] = ['facts', 'blocks', 'summaries', 'patterns', 'artifacts']

/**
 * The kinds that sync only where a project opted in: sessions travel in the project
 * document, each session's messages in a document of their own.
 */
export const CONVERSATION_KINDS: readonly ConversationKind[] = ['sessions', 'messages']

/** Every kind of a project document: {@link MIRRORED_KINDS} and the sessions list. */
export const PROJECT_DOC_KINDS: readonly MirroredKind[] = [...MIRRORED_KINDS, 'sessions']
