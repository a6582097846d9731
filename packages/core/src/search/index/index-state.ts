import type { PostingList } from './posting-codec.js'
import type { SegmentDir } from './segment-dirs.js'
import type { TextSegDocsRow } from './index-rows.js'
import { termsOf, tfAt, type SegmentRef, type TextCorpusRow, type TextDocRow } from './index-rows.js'

/** A document of the unmerged tail, as queries score it. */
export interface TailDoc {
  n: number
  q: number
  d: string
  a: number
  l: number
  k: number
  terms: string[]
  tfs: number[]
}
/** A removed document whose postings may still sit in merged blocks; `merged` false when it was removed before any merge took it. */
export interface DeadDoc {
  n: number
  q: number
  l: number
  merged?: boolean
  /** True when its removal is stored already (a member of a batch row): no merge needs to record it. */
  recorded?: boolean
}

/** What one committed transaction did to the index, replayed on the in-memory state after commit. */
export interface IndexChanges {
  added: TailDoc[]
  killed: DeadDoc[]
  /** Project numbers assigned in the transaction. */
  assigned: TextCorpusRow[]
  removedProjects: number[]
  /** Projects whose stored vectors changed other than by growing (their vector caches reload). */
  vectorProjects: Set<string>
  reset: boolean
  merged?: MergeResult
}

/** What a merge committed: the new mark, documents merged, dead ones purged from blocks, dead ones recorded as markers. */
export interface MergeResult {
  mark: number
  merged: number[]
  purged: number[]
  recorded: number[]
  /** Corpus rows the merge changed (statistics, segment lists). */
  corpus: TextCorpusRow[]
  /** Per project number, the terms the merge gave postings in blocks. */
  blockTerms?: ReadonlyMap<number, readonly string[]>
}

/** A decoded list of merged postings, valid while no merge or purge changed the blocks. */
interface CachedList {
  list: PostingList
  blockEpoch: number
}

/** What a cached list counts against the bound: its postings, and one for an empty list (a term known absent). */
const cost = (list: PostingList) => Math.max(1, list.count)

/**
 * The in-memory side of the index: the unmerged tail (documents numbered above
 * the merged mark), the dead documents still in blocks, the merged corpus
 * statistics per project and a bounded cache of decoded posting lists. Loaded
 * on the first query, then kept current by replaying committed changes.
 */
export class IndexState {
  ready = false
  /** Bumped by every replayed commit: a load that saw one retries. */
  epoch = 0
  /** Bumped when merged blocks change (merge, purge, project removal, reset): decoded lists read before are stale. */
  blockEpoch = 0
  /**
   * Bumped when the index is reset, cleared or loses a project's documents wholesale (not by a
   * merge, which only refolds postings): what a cache of the records behind hits forgets.
   */
  rewriteEpoch = 0
  mark = 0
  readonly tail = new Map<number, TailDoc>()
  /** `${q}\u0001${term}` → tail document numbers (removed ones are skipped by checking `tail`). */
  readonly tailTerms = new Map<string, number[]>()
  readonly dead = new Map<number, DeadDoc>()
  /** Dead merged documents without a stored marker yet (a delete writes nothing; the next merge records them). */
  private readonly unrecorded = new Map<number, DeadDoc>()
  /** Project id → merged row (number and merged statistics). */
  readonly projects = new Map<string, TextCorpusRow>()
  /** Per project number: live documents and length outside the merged statistics (tail added, dead taken away). */
  private readonly delta = new Map<number, { docs: number; length: number }>()
  private readonly lists = new Map<string, CachedList>()
  /** Loaded segment directories by `${q}:${g}` (null: the segment has none, written before directories). */
  readonly dirs = new Map<string, SegmentDir | null>()
  /** Loaded segment document lists by `${q}:${g}` (null: the segment has none). */
  readonly segDocs = new Map<string, TextSegDocsRow | null>()
  /** Projects whose document lists are being loaded. */
  readonly docsLoading = new Set<number>()
  /** Per project number, once loaded: every term with posting blocks (a superset: purges may have emptied some). */
  readonly blockTerms = new Map<number, Set<string>>()
  /**
   * Per project number, once checked: whether its stored document rows are as many as this state
   * expects ({@link expectedRows}). Only then may queries take documents from segment directories
   * rather than their rows: a document removed in an earlier session whose removal no merge
   * recorded has no row, and only a row read (or this count) reveals it.
   */
  readonly verified = new Map<number, boolean>()
  /** Ids and times of documents met in results (bounded, least recently used first out). */
  private readonly docs = new Map<number, { d: string; a: number }>()
  private cachedPostings = 0
  private loading: Promise<void> | undefined

  constructor(
    private readonly maxCachedPostings = 1_000_000,
    private readonly maxCachedDocs = 100_000,
  ) {}

  /**
   * Loads the state (retrying when a commit raced the load). Loads outside a
   * transaction are shared by concurrent callers; one inside the caller's
   * transaction (`shared` false) is its own, since awaiting another
   * transaction's work would let the caller's commit early.
   */
  async load(read: () => Promise<{ mark: number; corpus: TextCorpusRow[]; tail: TextDocRow[]; dead: TextDocRow[] }>, shared: boolean): Promise<void> {
    if (this.ready) return
    const run = async () => {
      for (;;) {
        const epoch = this.epoch
        const got = await read()
        if (epoch !== this.epoch) continue
        this.fill(got.mark, got.corpus, got.tail, got.dead)
        return
      }
    }
    if (!shared) return run()
    this.loading ??= run().finally(() => {
      this.loading = undefined
    })
    return this.loading
  }

  private fill(mark: number, corpus: readonly TextCorpusRow[], tail: readonly TextDocRow[], dead: readonly TextDocRow[]): void {
    const killed = [...this.unrecorded.values()]
    this.clearAll()
    this.mark = mark
    for (const row of corpus) this.projects.set(row.p, row)
    for (const row of tail) if (row.x === undefined && row.d !== undefined) this.addTail(tailDocOf(row))
    for (const row of dead) if (row.n! <= mark) this.addDead({ n: row.n!, q: row.q, l: row.l })
    // Deletes since open of merged documents that no merge has recorded yet.
    for (const doc of killed) {
      if (doc.n > mark || this.dead.has(doc.n) || !this.projectKnown(doc.q)) continue
      this.addDead(doc)
      this.unrecorded.set(doc.n, doc)
    }
    this.ready = true
  }

  /** Live document count and total length of a project. */
  stats(projectId: string): { q: number; docs: number; length: number } | undefined {
    const row = this.projects.get(projectId)
    if (!row) return undefined
    const d = this.delta.get(row.q)
    return { q: row.q, docs: Math.max(0, row.docs + (d?.docs ?? 0)), length: Math.max(0, row.length + (d?.length ?? 0)) }
  }

  /** The cached merged list of a term, when still valid. */
  list(key: string): PostingList | undefined {
    const hit = this.lists.get(key)
    if (!hit || hit.blockEpoch !== this.blockEpoch) return undefined
    this.lists.delete(key)
    this.lists.set(key, hit)
    return hit.list
  }

  /** The id and time of a live document, when cached. */
  doc(n: number): { d: string; a: number } | undefined {
    const tail = this.tail.get(n)
    if (tail) return tail
    const hit = this.docs.get(n)
    if (hit) {
      this.docs.delete(n)
      this.docs.set(n, hit)
    }
    return hit
  }

  /** Caches the id and time of a live document read from its row. */
  keepDoc(n: number, d: string, a: number): void {
    if (this.dead.has(n)) return
    this.docs.set(n, { d, a })
    if (this.docs.size > this.maxCachedDocs) this.docs.delete(this.docs.keys().next().value!)
  }

  /** Keeps a merged list decoded at `blockEpoch`, evicting the least recently used beyond the bound. */
  keepList(key: string, list: PostingList, blockEpoch: number): void {
    if (blockEpoch !== this.blockEpoch || list.count > this.maxCachedPostings / 4) return
    const old = this.lists.get(key)
    if (old) this.cachedPostings -= cost(old.list)
    this.lists.set(key, { list, blockEpoch })
    this.cachedPostings += cost(list)
    for (const [k, victim] of this.lists) {
      if (this.cachedPostings <= this.maxCachedPostings) break
      this.lists.delete(k)
      this.cachedPostings -= cost(victim.list)
    }
  }

  /** Replays one committed transaction. */
  apply(c: IndexChanges): void {
    this.epoch++
    for (const row of c.assigned) if (!this.projects.has(row.p)) this.projects.set(row.p, row)
    if (c.reset) {
      // Everything is reloaded on the next query (the transaction may have indexed documents after its reset).
      this.blockEpoch++
      this.rewriteEpoch++
      this.clearAll()
      return
    }
    for (const q of c.removedProjects) this.dropProject(q)
    if (!this.ready) {
      // Not loaded: a delete wrote no marker, so remember it until the load (or a merge) takes it.
      for (const doc of c.killed) if (doc.merged !== false && doc.recorded !== true) this.unrecorded.set(doc.n, doc)
      for (const n of [...(c.merged?.recorded ?? []), ...(c.merged?.purged ?? [])]) this.unrecorded.delete(n)
      return
    }
    for (const doc of c.killed) this.kill(doc)
    for (const doc of c.added) this.addTail(doc)
    if (c.merged) this.applyMerge(c.merged)
  }

  private applyMerge(m: MergeResult): void {
    this.blockEpoch++
    this.lists.clear()
    this.cachedPostings = 0
    this.mark = Math.max(this.mark, m.mark)
    for (const n of m.merged) {
      const doc = this.tail.get(n)
      if (!doc) continue
      this.tail.delete(n)
      this.shift(doc.q, -1, -doc.l)
      this.keepDoc(n, doc.d, doc.a)
    }
    for (const n of m.recorded) this.unrecorded.delete(n)
    for (const n of m.purged) {
      this.unrecorded.delete(n)
      const doc = this.dead.get(n)
      if (!doc) continue
      this.dead.delete(n)
      this.shift(doc.q, 1, doc.l)
    }
    for (const row of m.corpus) {
      const before = this.projects.get(row.p)
      if (!sameSegments(before?.s, row.s)) this.dropDirs(row.q)
      this.projects.set(row.p, row)
    }
    for (const [q, terms] of m.blockTerms ?? []) {
      const known = this.blockTerms.get(q)
      if (known) for (const w of terms) known.add(w)
    }
    this.rebuildTailTerms()
  }

  /** Forgets the loaded directories and block terms of a project (its segments changed, or it was removed). */
  private dropDirs(q: number): void {
    const prefix = `${q}:`
    for (const key of this.dirs.keys()) if (key.startsWith(prefix)) this.dirs.delete(key)
    for (const key of this.segDocs.keys()) if (key.startsWith(prefix)) this.segDocs.delete(key)
  }

  private kill(doc: DeadDoc): void {
    this.docs.delete(doc.n)
    const inTail = this.tail.get(doc.n)
    if (inTail) {
      this.tail.delete(doc.n)
      this.shift(inTail.q, -1, -inTail.l)
    } else if (doc.merged !== false && doc.n <= this.mark && !this.dead.has(doc.n)) {
      this.addDead(doc)
      if (doc.recorded !== true) this.unrecorded.set(doc.n, doc)
    }
  }

  /**
   * A merged document found without its row (removed where no marker was recorded, e.g. the
   * store closed before the merge that records it): from now on queries skip it and the
   * statistics leave it out, and the next merge records it.
   */
  discover(doc: DeadDoc): void {
    if (!this.ready || doc.n > this.mark || this.dead.has(doc.n) || this.tail.has(doc.n)) return
    this.addDead(doc)
    this.unrecorded.set(doc.n, doc)
    this.verified.delete(doc.q)
  }

  /**
   * The document rows project `q` should have: one per merged document not yet purged (a removed
   * one keeps a marker row once a merge recorded it) less those removed without a marker yet,
   * plus one per live unmerged document.
   */
  expectedRows(q: number): number | undefined {
    let rows: number | undefined
    for (const row of this.projects.values()) if (row.q === q) rows = row.docs
    if (rows === undefined) return undefined
    for (const doc of this.unrecorded.values()) if (doc.q === q) rows--
    for (const doc of this.tail.values()) if (doc.q === q) rows++
    return rows
  }

  private projectKnown(q: number): boolean {
    for (const row of this.projects.values()) if (row.q === q) return true
    return false
  }

  /** Dead merged documents the next merge should record. */
  pendingMarkers(): DeadDoc[] {
    return [...this.unrecorded.values()]
  }

  private addDead(doc: DeadDoc): void {
    this.dead.set(doc.n, doc)
    this.shift(doc.q, -1, -doc.l)
  }

  private addTail(doc: TailDoc): void {
    if (doc.n <= this.mark || this.tail.has(doc.n)) return
    this.tail.set(doc.n, doc)
    this.shift(doc.q, 1, doc.l)
    for (const term of doc.terms) {
      const key = `${doc.q}\u0001${term}`
      const list = this.tailTerms.get(key)
      if (list) list.push(doc.n)
      else this.tailTerms.set(key, [doc.n])
    }
  }

  private rebuildTailTerms(): void {
    this.tailTerms.clear()
    for (const doc of [...this.tail.values()].sort((a, b) => a.n - b.n)) {
      for (const term of doc.terms) {
        const key = `${doc.q}\u0001${term}`
        const list = this.tailTerms.get(key)
        if (list) list.push(doc.n)
        else this.tailTerms.set(key, [doc.n])
      }
    }
  }

  private shift(q: number, docs: number, length: number): void {
    const d = this.delta.get(q)
    if (d) {
      d.docs += docs
      d.length += length
    } else this.delta.set(q, { docs, length })
  }

  private dropProject(q: number): void {
    this.blockEpoch++
    this.rewriteEpoch++
    this.docs.clear()
    this.dropDirs(q)
    this.blockTerms.delete(q)
    this.verified.delete(q)
    for (const [id, row] of this.projects) if (row.q === q) this.projects.set(id, { p: row.p, q: row.q, docs: 0, length: 0 })
    for (const [n, doc] of this.unrecorded) if (doc.q === q) this.unrecorded.delete(n)
    if (!this.ready) return
    for (const [n, doc] of this.tail) if (doc.q === q) this.tail.delete(n)
    for (const [n, doc] of this.dead) if (doc.q === q) this.dead.delete(n)
    this.delta.delete(q)
    this.rebuildTailTerms()
  }

  /** Forgets everything (a reload follows on the next query). */
  clear(): void {
    this.epoch++
    this.blockEpoch++
    this.rewriteEpoch++
    this.clearAll()
  }

  private clearAll(): void {
    this.ready = false
    this.mark = 0
    this.tail.clear()
    this.tailTerms.clear()
    this.dead.clear()
    this.unrecorded.clear()
    this.projects.clear()
    this.delta.clear()
    this.lists.clear()
    this.docs.clear()
    this.dirs.clear()
    this.segDocs.clear()
    this.blockTerms.clear()
    this.verified.clear()
    this.cachedPostings = 0
  }
}

/** Whether two segment lists name the same segments with the same sizes. */
function sameSegments(a: readonly SegmentRef[] | undefined, b: readonly SegmentRef[] | undefined): boolean {
  if ((a?.length ?? 0) !== (b?.length ?? 0)) return false
  return (a ?? []).every((ref, i) => ref.g === b![i]!.g && ref.c === b![i]!.c)
}

/** The tail view of a stored (live) document row. */
export function tailDocOf(row: TextDocRow): TailDoc {
  const terms = termsOf(row)
  return { n: row.n!, q: row.q, d: row.d!, a: row.a, l: row.l, k: row.k, terms, tfs: terms.map((_, i) => tfAt(row, i)) }
}
