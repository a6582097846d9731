import type { CorpusStatsRow, PostingRow } from './index-rows.js'

/** A change the index committed, replayed onto the cache after commit. */
export type IndexDelta =
  | { op: 'put'; projectId: string; len: number; rows: PostingRow[] }
  | { op: 'remove'; projectId: string; docId: string; len: number; terms: string[] }
  | { op: 'removeProject'; projectId: string }
  | { op: 'reset' }

/**
 * What queries keep in memory, loaded lazily (never all at once, so opening a
 * store stays instant) and kept current by replaying committed index changes:
 * document frequencies of terms, fully read posting lists (bounded, LRU) and
 * corpus statistics. A value read while a write committed is used for that
 * query but not kept (the epoch moved), so the cache never holds a snapshot
 * older than what it replayed.
 */
export class PostingCache {
  private readonly lists = new Map<string, Map<string, PostingRow>>()
  private readonly dfs = new Map<string, number>()
  private readonly corpus = new Map<string, CorpusStatsRow>()
  private size = 0
  /** Bumped by every committed change; loads compare it before caching. */
  epoch = 0

  constructor(
    private readonly maxPostings = 400_000,
    private readonly maxTerms = 100_000,
  ) {}

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

  /** The document frequency of a term, when known. */
  df(term: string): number | undefined {
    const cached = this.lists.get(term)
    return cached ? cached.size : this.dfs.get(term)
  }

  keepDf(term: string, df: number, epoch: number): void {
    if (epoch !== this.epoch) return
    if (this.dfs.size >= this.maxTerms) this.dfs.delete(this.dfs.keys().next().value!)
    this.dfs.set(term, df)
  }

  corpusOf(projectId: string): CorpusStatsRow | undefined {
    return this.corpus.get(projectId)
  }

  keepCorpus(row: CorpusStatsRow, epoch: number): void {
    if (epoch === this.epoch) this.corpus.set(row.projectId, row)
  }

  /** Replays the changes of one committed transaction (removes come before the put that replaced them). */
  apply(deltas: readonly IndexDelta[]): void {
    this.epoch++
    for (const d of deltas) {
      if (d.op === 'reset') {
        this.dropAll()
        continue
      }
      if (d.op === 'removeProject') {
        this.dropProject(d.projectId)
        continue
      }
      const stats = this.corpus.get(d.projectId)
      const sign = d.op === 'put' ? 1 : -1
      if (stats)
        this.corpus.set(d.projectId, { projectId: d.projectId, docs: Math.max(0, stats.docs + sign), length: Math.max(0, stats.length + sign * d.len) })
      if (d.op === 'put') {
        for (const row of d.rows) {
          const df = this.dfs.get(row.term)
          if (df !== undefined) this.dfs.set(row.term, df + 1)
          const list = this.lists.get(row.term)
          if (!list) continue
          if (!list.has(row.docId)) this.size++
          list.set(row.docId, row)
        }
      } else {
        for (const term of d.terms) {
          const df = this.dfs.get(term)
          if (df !== undefined) this.dfs.set(term, Math.max(0, df - 1))
          if (this.lists.get(term)?.delete(d.docId)) this.size--
        }
      }
    }
  }

  private dropProject(projectId: string): void {
    this.corpus.delete(projectId)
    const prefix = `${projectId}\u0001`
    for (const [term, list] of this.lists) {
      if (!term.startsWith(prefix)) continue
      this.lists.delete(term)
      this.size -= list.size
    }
    for (const term of this.dfs.keys()) if (term.startsWith(prefix)) this.dfs.delete(term)
  }

  clear(): void {
    this.epoch++
    this.dropAll()
  }

  private dropAll(): void {
    this.lists.clear()
    this.dfs.clear()
    this.corpus.clear()
    this.size = 0
  }
}
