import type { MirroredSets } from '../store/kind.js'
import { KINDS } from './kinds.js'

/*
 * The central lists of the store, built from the kinds' manifests (`<kind>/kind.ts`): the
 * change feed's kinds and the mirrored kinds (the dump's tables are dump-tables.ts, the at-rest
 * fields at-rest-fields.ts: they load with the code that reads them). Nothing here is typed
 * again: a kind added to catalog/kinds.ts is in every list.
 */

type Kinds = (typeof KINDS)[number]
type WithMirror = Extract<Kinds, { mirrored: object }>

/** A manifest's list field, or its name where it leaves the field out. */
const listOf = (k: Kinds, field: 'changeKinds' | 'namespaces'): readonly string[] => (k as { [F in typeof field]?: readonly string[] })[field] ?? [k.name]

/** The plural name of a memory kind, as it appears in `Change.kind` (each manifest's `changeKinds`, or its name). */
export type ChangeKind = (typeof KINDS)[number] extends infer K
  ? K extends { readonly changeKinds: readonly (infer V)[] }
    ? V
    : K extends { readonly name: infer N }
      ? N
      : never
  : never
/** Every {@link ChangeKind}, for checking subscription filters. */
export const CHANGE_KINDS = KINDS.flatMap((k) => listOf(k, 'changeKinds')) as readonly ChangeKind[]

/** The memory kinds that sync mirrors between devices (the manifests with `mirrored`). */
export type MirroredKind = Extract<(typeof KINDS)[number], { readonly mirrored: object }>['name']
/** The kinds that sync only in projects that opt in (`projects.setSync(id, { messages: true })`). */
export type ConversationKind = Extract<(typeof KINDS)[number], { readonly mirrored: { readonly when: 'conversations' } }>['name']

const mirroring = KINDS.filter((k): k is WithMirror => 'mirrored' in k)

/**
 * The kinds every synced project mirrors, in one list (the outbox, the change feed filter,
 * dumps, adoption and the sync mirror read it). Conversations are {@link CONVERSATION_KINDS}.
 */
export const MIRRORED_KINDS = mirroring.filter((k) => k.mirrored.when === 'always').map((k) => k.name) as readonly Exclude<MirroredKind, ConversationKind>[]
/** The kinds that sync only where a project opted in: sessions travel in the project document, each session's messages in a document of their own. */
export const CONVERSATION_KINDS = mirroring.filter((k) => k.mirrored.when === 'conversations').map((k) => k.name) as readonly ConversationKind[]
/** Every kind of a project document: {@link MIRRORED_KINDS} and the sessions list. */
export const PROJECT_DOC_KINDS: readonly MirroredKind[] = [
  ...MIRRORED_KINDS,
  ...CONVERSATION_KINDS.filter((name) => mirroring.some((k) => k.name === name && k.mirrored.document === 'project')),
]
/** The row field each mirrored kind's document id stands for (a sync engine leaves it out of stored values). */
export const IDENTITY_FIELDS = Object.fromEntries(mirroring.map((k) => [k.name, k.mirrored.identity])) as Readonly<Record<MirroredKind, string>>
/** The mirrored kinds as the store's writes look them up (to fill the outbox). */
export const MIRRORED_SETS: MirroredSets = { always: new Set(MIRRORED_KINDS), conversations: new Set(CONVERSATION_KINDS) }
/** The manifests of the mirrored kinds (their descriptors load with replication). */
export const MIRRORING_KINDS: readonly WithMirror[] = mirroring

/** The members of `Memory` the kinds add (each kind's namespaces and functions). */
export const KIND_NAMESPACES: readonly string[] = /* @__PURE__ */ KINDS.flatMap((k) => listOf(k, 'namespaces'))
