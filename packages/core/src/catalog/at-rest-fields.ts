import { KINDS } from './kinds.js'

/* What at-rest encryption seals, hashes and keeps clear, from the kinds' manifests (`encryption`); loads with the encryption code. */

type Kinds = (typeof KINDS)[number]
type Fields = { readonly [table: string]: readonly string[] }
const encryptionOf = (k: Kinds) => ('encryption' in k ? (k.encryption as { hashed?: Fields; clear?: Fields; plain?: readonly string[] }) : {})

/** At rest: fields stored as keyed hashes, per table (every indexed field that holds text a user or app wrote). */
export const HASHED_FIELDS: Fields = Object.assign({}, ...KINDS.map((k) => encryptionOf(k).hashed ?? {}))
/** At rest: fields kept clear beyond the indexed ones. */
export const CLEAR_FIELDS: Fields = Object.assign({}, ...KINDS.map((k) => encryptionOf(k).clear ?? {}))
/** At rest: tables stored as they are, and `meta` (the store's own state and the key bundle; no user text). */
export const PLAIN_TABLES: ReadonlySet<string> = new Set([...KINDS.flatMap((k) => encryptionOf(k).plain ?? []), 'meta'])
