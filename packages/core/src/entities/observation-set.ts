import { compareHlc } from '../store/hlc.js'

/**
 * An entity's observations as a set that merges across devices: each observation carries the
 * stamp of the write that added it, each removed one leaves a tombstone with the stamp of its
 * removal. Two states merge observation by observation:
 *
 * - an observation known to one side only is kept (live or removed, as that side has it), so
 *   concurrent adds of different observations both survive;
 * - one known to both sides takes the mark with the later stamp (ties by device id, as every
 *   stamp): an observation removed on one device and added again on another while they were
 *   apart is live when the add was stamped later, removed when the removal was.
 *
 * Live observations merge into stamp order (oldest add first, ties by text), the same on every
 * device. At most {@link MAX_TOMBSTONES} tombstones are kept (the newest): a device that was
 * offline across more removals than that may bring the oldest removed ones back.
 */
export interface ObservationSet {
  observations: string[]
  /** The add stamp of each observation, in the same order (rows written before stamps: the row's stamp). */
  observationStamps?: string[]
  /** Removed observations and the stamps of their removal. */
  observationTombstones?: ObservationTombstone[]
}

/** A removed observation. */
export interface ObservationTombstone {
  text: string
  hlc: string
}

/** Most tombstones an entity keeps. */
export const MAX_TOMBSTONES = 1_000

interface Mark {
  text: string
  hlc: string
  removed: boolean
}

function marksOf(set: ObservationSet, rowHlc: string): Map<string, Mark> {
  const marks = new Map<string, Mark>()
  for (const t of set.observationTombstones ?? []) marks.set(t.text, { text: t.text, hlc: t.hlc, removed: true })
  set.observations.forEach((text, i) => {
    const hlc = set.observationStamps?.[i] ?? rowHlc
    const seen = marks.get(text)
    if (!seen || compareHlc(hlc, seen.hlc) > 0) marks.set(text, { text, hlc, removed: false })
  })
  return marks
}

function fromMarks(marks: Iterable<Mark>, order: 'stamp' | 'given'): Required<ObservationSet> {
  const all = [...marks]
  const live = all.filter((m) => !m.removed)
  if (order === 'stamp') live.sort((a, b) => compareHlc(a.hlc, b.hlc) || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
  const tombstones = all
    .filter((m) => m.removed)
    .sort((a, b) => compareHlc(a.hlc, b.hlc) || (a.text < b.text ? -1 : 1))
    .slice(-MAX_TOMBSTONES)
  return {
    observations: live.map((m) => m.text),
    observationStamps: live.map((m) => m.hlc),
    observationTombstones: tombstones.map((m) => ({ text: m.text, hlc: m.hlc })),
  }
}

/**
 * The set after a local write that leaves `next` live: kept observations keep their stamps,
 * new ones (and ones added again) take `hlc`, dropped ones become tombstones stamped `hlc`.
 */
export function editObservations(row: ObservationSet & { hlc: string }, next: readonly string[], hlc: string): Required<ObservationSet> {
  const marks = marksOf(row, row.hlc)
  const keep = new Set(next)
  for (const m of marks.values()) if (!m.removed && !keep.has(m.text)) marks.set(m.text, { text: m.text, hlc, removed: true })
  const ordered: Mark[] = next.map((text) => {
    const m = marks.get(text)
    return m && !m.removed ? m : { text, hlc, removed: false }
  })
  for (const m of marks.values()) if (m.removed) ordered.push(m)
  return fromMarks(ordered, 'given')
}

/** Two states of one entity merged (see {@link ObservationSet}); the same result whichever comes first. */
export function mergeObservations(a: ObservationSet & { hlc: string }, b: ObservationSet & { hlc: string }): Required<ObservationSet> {
  const marks = marksOf(a, a.hlc)
  for (const m of marksOf(b, b.hlc).values()) {
    const seen = marks.get(m.text)
    // Equal stamps are one write: a removal and an add of one stamp cannot both be; removal decides.
    const later = !seen || compareHlc(m.hlc, seen.hlc) > 0 || (compareHlc(m.hlc, seen.hlc) === 0 && m.removed)
    if (later) marks.set(m.text, m)
  }
  return fromMarks(marks.values(), 'stamp')
}

/** Whether two states hold the same marks (live observations with their stamps, tombstones), in any order. */
export function sameObservations(a: ObservationSet & { hlc: string }, b: ObservationSet & { hlc: string }): boolean {
  const x = marksOf(a, a.hlc)
  const y = marksOf(b, b.hlc)
  if (x.size !== y.size) return false
  for (const [text, m] of x) {
    const n = y.get(text)
    if (!n || n.hlc !== m.hlc || n.removed !== m.removed) return false
  }
  return true
}
