import { KINDS } from './kinds.js'

/* The tables of a dump, from the kinds' manifests (`dump`); loads with export and import. */

type Kinds = (typeof KINDS)[number]
type DumpDecl = { tables?: readonly string[]; projectRows?: true | readonly string[] }
type Dumped<K = Extract<Kinds, { dump: object }>> = K extends { dump: { tables: readonly (infer T)[] } }
  ? T
  : K extends { tables: infer Tables }
    ? keyof Tables & string
    : never
const dumpedTables = (k: Kinds): readonly string[] => ('dump' in k ? ((k.dump as DumpDecl).tables ?? Object.keys(k.tables)) : [])
/** Every table a dump holds, in the order it lists them. */
export const MEMORY_TABLES = KINDS.flatMap(dumpedTables) as readonly Dumped[]
/** Tables whose every row carries `projectId` (scoped through their projectId index). */
export const PROJECT_ROWS: ReadonlySet<string> = new Set(
  KINDS.flatMap((k) => {
    const rows = 'dump' in k ? (k.dump as DumpDecl).projectRows : undefined
    return rows === true ? dumpedTables(k) : (rows ?? [])
  }),
)
