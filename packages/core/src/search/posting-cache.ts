import type { CorpusStatsRow, PostingRow } from './index-rows.js'

/** A change the index committed, replayed onto the cache after commit. */
export type IndexDelta =
  | { op: 'put'; projectId: string; rows: PostingRow[] }
  | { op: 'remove'; projectId: string; docId: string; terms: string[] }
  | { op: 'removeProject'; projectId: string }

/**
 * Hot posting lists and corpus statistics in memory, loaded lazily per term
 * (never all at once, so opening a store stays instant) and kept current by
 * replaying committed index changes. A list loaded while a write committed is
 * used for that query but not kept (the epoch moved), so the cache never holds
 * a snapshot older than what it replayed.
 */
export class PostingCache {
  private readonly lists = new Map<string, Map<string, PostingRow>>()
  private readonly corpus = new Map<string, CorpusStatsRow>()
  private size = 0
  /** Bumped by every committed change; loads compare it before caching. */
  epoch = 0

  constructor(private readonly maxPostings = 2_000_000) {}

  /** The cached list of a term, freshened for LRU eviction. */
  list(term: string): Map<string, PostingRow> | undefined {
    const list = this.lists.get(term)
    if (list) {
      this.lists.delete(term)
      this.lists.set(term, list)
    }
    return list
  }

  /** Keeps a list loaded at `epoch` unless a change committed since. */
  keepList(term: string, list: Map<string, PostingRow>, epoch: number): void {
    if (epoch !== this.epoch || list.size > this.maxPostings / 4) return
    const old = this.lists.get(term)
    if (old) this.size -= old.size
    this.lists.set(term, list)
    this.size += list.size
    for (const [key, victim] of this.lists) {
      if (this.size <= this.maxPostings) break
      this.lists.delete(key)
      this.size -= victim.size
    }
  }

  corpusOf(projectId: string): CorpusStatsRow | undefined {
    return this.corpus.get(projectId)
  }

  keepCorpus(row: CorpusStatsRow, epoch: number): void {
    if (epoch === this.epoch) this.corpus.set(row.projectId, row)
  }

  /** Replays the changes of one committed transaction (idempotent per document). */
  apply(deltas: readonly IndexDelta[]): void {
    this.epoch++
    for (const d of deltas) {
      this.corpus.delete(d.projectId)
      if (d.op === 'put') {
        for (const row of d.rows) {
          const list = this.lists.get(row.term)
          if (!list) continue
          if (!list.has(row.docId)) this.size++
          list.set(row.docId, row)
        }
      } else if (d.op === 'remove') {
        for (const term of d.terms) if (this.lists.get(term)?.delete(d.docId)) this.size--
      } else {
        const prefix = `${d.projectId}\u0001`
        for (const [term, list] of this.lists) {
          if (!term.startsWith(prefix)) continue
          this.lists.delete(term)
          this.size -= list.size
        }
      }
    }
  }

  clear(): void {
    this.epoch++
    this.lists.clear()
    this.corpus.clear()
    this.size = 0
  }
}
