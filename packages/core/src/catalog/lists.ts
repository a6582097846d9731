import type { MirroredSets } from '../store/kind.js'
import { KINDS } from './kinds.js'

/*
 * The central lists of the store, built from the kinds' manifests (`<kind>/kind.ts`): the
 * change feed's kinds, the mirrored kinds, the dump's tables and the at-rest encryption's
 * fields. Nothing here is typed again: a kind added to catalog/kinds.ts is in every list.
 */

type Kinds = (typeof KINDS)[number]
type WithMirror = Extract<Kinds, { mirrored: object }>

/** The plural name of a memory kind, as it appears in `Change.kind`. */
export type ChangeKind = Kinds['changeKinds'][number]
/** Every {@link ChangeKind}, for checking subscription filters. */
export const CHANGE_KINDS: readonly ChangeKind[] = KINDS.flatMap((k) => k.changeKinds)

/** The memory kinds that sync mirrors between devices. */
export type MirroredKind = WithMirror['name']
/** The kinds that sync only in projects that opt in (`projects.setSync(id, { messages: true })`). */
export type ConversationKind = Extract<WithMirror, { mirrored: { when: 'conversations' } }>['name']

const mirroring = KINDS.filter((k): k is WithMirror => 'mirrored' in k)

/**
 * The kinds every synced project mirrors, in one list (the outbox, the change feed filter,
 * dumps, adoption and the sync mirror read it). Conversations are {@link CONVERSATION_KINDS}.
 */
export const MIRRORED_KINDS = mirroring.filter((k) => k.mirrored.when === 'always').map((k) => k.name) as readonly Exclude<MirroredKind, ConversationKind>[]
/** The kinds that sync only where a project opted in: sessions travel in the project document, each session's messages in a document of their own. */
export const CONVERSATION_KINDS = mirroring.filter((k) => k.mirrored.when === 'conversations').map((k) => k.name) as readonly ConversationKind[]
/** Every kind of a project document: {@link MIRRORED_KINDS} and the sessions list. */
export const PROJECT_DOC_KINDS = mirroring.filter((k) => k.mirrored.document === 'project').map((k) => k.name) as readonly MirroredKind[]
/** The mirrored kinds as the store's writes look them up (to fill the outbox). */
export const MIRRORED_SETS: MirroredSets = { always: new Set(MIRRORED_KINDS), conversations: new Set(CONVERSATION_KINDS) }
/** The manifests of the mirrored kinds (their descriptors load with replication). */
export const MIRRORING_KINDS: readonly WithMirror[] = mirroring

type Dumped = Extract<Kinds, { dump: object }>['dump']['tables'][number]
/** Every table a dump holds, in the order it lists them. */
export const MEMORY_TABLES = KINDS.flatMap((k) => ('dump' in k ? k.dump.tables : [])) as readonly Dumped[]
/** Tables whose every row carries `projectId` (scoped through their projectId index). */
export const PROJECT_ROWS: ReadonlySet<string> = new Set(
  KINDS.flatMap((k) => ('dump' in k ? ((k.dump as { projectRows?: readonly string[] }).projectRows ?? []) : [])),
)

/** The members of `Memory` the kinds add (each kind's namespaces and functions). */
export const KIND_NAMESPACES: readonly string[] = KINDS.flatMap((k) => k.namespaces)

type Fields = { readonly [table: string]: readonly string[] }
const encryptionOf = (k: Kinds) => ('encryption' in k ? (k.encryption as { hashed?: Fields; clear?: Fields; plain?: readonly string[] }) : {})

/** At rest: fields stored as keyed hashes, per table (every indexed field that holds text a user or app wrote). */
export const HASHED_FIELDS: Fields = Object.assign({}, ...KINDS.map((k) => encryptionOf(k).hashed ?? {}))
/** At rest: fields kept clear beyond the indexed ones. */
export const CLEAR_FIELDS: Fields = Object.assign({}, ...KINDS.map((k) => encryptionOf(k).clear ?? {}))
/** At rest: tables stored as they are, and `meta` (the store's own state and the key bundle; no user text). */
export const PLAIN_TABLES: ReadonlySet<string> = new Set([...KINDS.flatMap((k) => encryptionOf(k).plain ?? []), 'meta'])
