import { type MirroredKind, readHlc } from '@engram/core'
import { IDENTITY_FIELDS } from '@engram/core/internal'
import type { SyncProblem } from './sync-types.js'

/** A record of the document named by kind, id and the stamp it is held at (with its row when known: it names the record). */
export interface StampedId {
  kind: MirroredKind
  id: string
  hlc: string
  row?: { readonly [field: string]: unknown }
}

/** The fact's key or the block's label of a record, for the kinds keyed by one. */
function nameOf(r: StampedId): string | undefined {
  const field = IDENTITY_FIELDS[r.kind]
  const name = field === 'id' ? undefined : r.row?.[field]
  return typeof name === 'string' ? name : undefined
}

/** What {@link createRecordProblems} needs from its document's mirror. */
export interface RecordProblemsDeps {
  readonly projectId: string
  /** The clock-lead bound, ms, for the messages. */
  readonly maxClockLeadMs: number
  /** Whether a stamp leads this device's (corrected) clock by more than the bound. */
  isAhead(hlc: string): boolean
  /** The list changed. */
  onChange(problems: readonly SyncProblem[]): void
}

/**
 * The problems of one document: records set aside (a malformed stamp; a value
 * sealed by the losing device of a key race) and records applied with a stamp
 * far ahead of this device's clock (`clock_ahead`, listed and never set aside:
 * every device takes them alike). Keyed `<kind>:<id>`, one per record.
 */
export interface RecordProblems {
  /** Records set aside: listed until a valid record replaces them. @returns the problems that are new. */
  setAside(type: 'malformed_stamp' | 'other_key', entries: ReadonlyArray<{ kind: MirroredKind; id: string; hlc: string }>): SyncProblem[]
  /**
   * The document now holds these records at these stamps: a record set aside there is replaced,
   * and each is listed as `clock_ahead` while its stamp is far ahead of this device's clock.
   */
  held(records: readonly StampedId[]): void
  /** Looks at the `clock_ahead` problems again: those the clock has caught up with go. */
  refresh(): void
  readonly list: readonly SyncProblem[]
}

/** Creates the problem list of one document. */
export function createRecordProblems(deps: RecordProblemsDeps): RecordProblems {
  const problems = new Map<string, SyncProblem>()
  let list: readonly SyncProblem[] = []
  const changed = (): void => {
    list = Object.freeze([...problems.values()])
    deps.onChange(list)
  }
  const { projectId } = deps

  function aheadMessage(r: StampedId): string {
    return `Took ${r.kind} ${r.id} of project ${projectId} with stamp ${r.hlc} (device ${readHlc(r.hlc)?.deviceId}), more than ${deps.maxClockLeadMs} ms ahead of this device's clock (is the writing device's clock wrong?). Every device takes it alike; the next edit of it wins`
  }
  function asideMessage(type: 'malformed_stamp' | 'other_key', e: { kind: MirroredKind; id: string; hlc: string }): string {
    return type === 'malformed_stamp'
      ? `Set aside ${e.kind} ${e.id} of project ${projectId}: its stamp ${JSON.stringify(e.hlc)} is not a valid HLC stamp (no device applies it; a device that holds the record publishes it again)`
      : `Set aside ${e.kind} ${e.id} of project ${projectId}: it was sealed by a device that set the project up with another key at the same time (that device refuses to sync); the next local edit replaces it`
  }

  return {
    get list() {
      return list
    },
    setAside(type, entries) {
      const fresh: SyncProblem[] = []
      for (const e of entries) {
        const key = `${e.kind}:${e.id}`
        const current = problems.get(key)
        if (current?.type === type && current.hlc === e.hlc) continue
        const problem: SyncProblem = { type, kind: e.kind, id: e.id, key, hlc: e.hlc, message: asideMessage(type, e) }
        problems.set(key, problem)
        fresh.push(problem)
      }
      if (fresh.length > 0) changed()
      return fresh
    },
    held(records) {
      let dirty = false
      for (const r of records) {
        const key = `${r.kind}:${r.id}`
        const current = problems.get(key)
        if (deps.isAhead(r.hlc)) {
          if (current?.type === 'clock_ahead' && current.hlc === r.hlc) continue
          const problem: SyncProblem = {
            type: 'clock_ahead',
            kind: r.kind,
            id: r.id,
            key,
            hlc: r.hlc,
            message: aheadMessage(r),
            deviceId: readHlc(r.hlc)!.deviceId,
          }
          const name = nameOf(r)
          if (name !== undefined) problem.name = name
          problems.set(key, problem)
          dirty = true
        } else if (current !== undefined) {
          problems.delete(key)
          dirty = true
        }
      }
      if (dirty) changed()
    },
    refresh() {
      let dirty = false
      for (const [key, p] of problems) {
        if (p.type === 'clock_ahead' && !deps.isAhead(p.hlc)) dirty = problems.delete(key) || dirty
      }
      if (dirty) changed()
    },
  }
}
