import { B, K1, topCandidates, type Candidate, type PostingFilter } from './bm25.js'
import {
  bucketRange,
  entryIndex,
  kindOf,
  MAX_ENTRY_LEN,
  postingOf,
  termRange,
  TF_CAP,
  type CorpusStatsRow,
  type DocKey,
  type PostingRow,
  type SearchDocRow,
} from './index-rows.js'
import { scoreBySortedAccess } from './sorted-access.js'
import type { SearchEngine } from './text-index.js'

/** Reading one document row costs about this many postings of a list read; above it a full list read is cheaper. */
export const LOOKUP_COST = 8

/** A query term with its document frequency, idf and the most it can add to a score. */
export interface QueryTerm {
  term: string
  df: number
  idf: number
  bound: number
}

/**
 * Ranks documents with Okapi BM25 for the query terms (keys of one project)
 * and returns the best `depth`, best first, in two phases (MaxScore): posting
 * lists are read whole from the rarest term on, until the `depth`-th best
 * score so far beats the most the remaining (common) terms could add; those
 * terms are then only looked up for the candidates that can still make the
 * cut. Documents are never loaded to score them. Runs inside the caller's read
 * transaction.
 */
export async function textCandidates(
  engine: SearchEngine,
  projectId: string,
  terms: readonly string[],
  filter: PostingFilter,
  depth: number,
): Promise<Candidate[]> {
  const { cache } = engine
  const epoch = cache.epoch
  // Terms first met since open (document frequency not cached yet): a long list of theirs is read best first.
  const cold = new Set(terms.filter((term) => cache.df(term) === undefined))
  const [corpus, dfs] = await Promise.all([corpusOf(engine, projectId, epoch), Promise.all(terms.map((term) => dfOf(engine, term, epoch)))])
  const avgLength = corpus.docs > 0 ? Math.max(1, corpus.length / corpus.docs) : 1
  const query: QueryTerm[] = []
  terms.forEach((term, i) => {
    const df = dfs[i]!
    if (df === 0) return
    const n = Math.max(corpus.docs, df)
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
    query.push({ term, df, idf, bound: idf * (K1 + 1) })
  })
  query.sort((a, b) => a.df - b.df || (a.term < b.term ? -1 : 1))
  // rest[i]: the most terms i.. can add to any document's score.
  const rest = new Array<number>(query.length + 1).fill(0)
  for (let i = query.length - 1; i >= 0; i--) rest[i] = rest[i + 1]! + query[i]!.bound

  const lengthWeight = (K1 * B) / avgLength
  const constant = K1 * (1 - B)
  const weight = (q: QueryTerm, p: PostingRow) => (q.idf * p.tf * (K1 + 1)) / (p.tf + constant + lengthWeight * p.len)
  const scores = new Map<string, Candidate>()
  const add = (q: QueryTerm, p: PostingRow) => {
    const found = scores.get(p.docId)
    if (found) found.score += weight(q, p)
    else if (passes(p, filter)) {
      const c: Candidate = { docId: p.docId, kind: kindOf(p.docId), at: p.at, len: p.len, score: weight(q, p) }
      if (p.sid !== undefined) c.sid = p.sid
      scores.set(p.docId, c)
    }
  }

  const rows = new Map<string, SearchDocRow | undefined>()
  let i = 0
  for (; i < query.length; i++) {
    if (i > 0 && kthScore(scores, depth) > rest[i]!) break
    if (
      i === query.length - 1 &&
      query[i]!.df > engine.sortedAccessMinDf &&
      (engine.sortedAccessWarm || cold.has(query[i]!.term)) &&
      !cache.list(query[i]!.term)
    ) {
      // The last term is a long list met for the first time: read it best postings first, only as far as
      // the top k needs. A term queried again is read whole and cached, so repeated queries stay in memory.
      // (With several long lists left, the unseen bound stays high until nearly all is read: read them whole.)
      await scoreBySortedAccess(
        engine,
        query.slice(i),
        scores,
        filter,
        depth,
        (q, tf, len) => weight(q, { term: q.term, docId: '', tf, len, at: 0 }),
        avgLength,
      )
      return topCandidates(scores.values(), depth)
    }
    for (const p of (await fullList(engine, query[i]!.term, epoch)).values()) add(query[i]!, p)
  }
  for (; i < query.length; i++) {
    const q = query[i]!
    const floor = kthScore(scores, depth) - rest[i]!
    const alive = [...scores.values()].filter((c) => c.score >= floor)
    if (alive.length === 0) break
    let list = cache.list(q.term)
    if (!list && q.df <= alive.length * LOOKUP_COST) list = await fullList(engine, q.term, epoch)
    if (list) {
      for (const c of alive) {
        const p = list.get(c.docId)
        if (p) c.score += weight(q, p)
      }
    } else {
      const missing = alive.filter((c) => !rows.has(c.docId))
      const found = await engine.t.searchDocs.bulkGet(missing.map(keyOfCandidate))
      found.forEach((row, j) => rows.set(missing[j]!.docId, row))
      for (const c of alive) {
        const row = rows.get(c.docId)
        const at = row ? entryIndex(row, q.term) : -1
        if (at >= 0) c.score += weight(q, { term: q.term, docId: c.docId, tf: row!.tfs[at]!, len: row!.len, at: c.at })
      }
    }
  }
  return topCandidates(scores.values(), depth)
}

export function passes(p: PostingRow, filter: PostingFilter): boolean {
  if (filter.kinds !== undefined && !filter.kinds.has(kindOf(p.docId))) return false
  if (filter.sessionId !== undefined && p.sid !== filter.sessionId) return false
  return filter.excludeSessionId === undefined || p.sid !== filter.excludeSessionId
}

/** The `k`-th best score so far (−∞ while fewer than `k` documents matched). */
export function kthScore(scores: ReadonlyMap<string, Candidate>, k: number): number {
  if (scores.size < k) return -Infinity
  const all = new Float64Array(scores.size)
  let i = 0
  for (const c of scores.values()) all[i++] = c.score
  all.sort()
  return all[all.length - k]!
}

async function dfOf(engine: SearchEngine, term: string, epoch: number): Promise<number> {
  const known = engine.cache.df(term)
  if (known !== undefined) return known
  const [lower, upper] = termRange(term)
  const df = await engine.t.searchDocs.where('terms').between(lower, upper).count()
  engine.cache.keepDf(term, df, epoch)
  return df
}

export function keyOfCandidate(c: Candidate): DocKey {
  return [c.docId, c.len ?? 0, c.at, c.sid ?? '']
}

/**
 * The postings of a term: the primary keys of its documents, one index range
 * per frequency below TF_CAP; the few documents at or above it are read for
 * their exact frequency.
 */
export async function fullList(engine: SearchEngine, term: string, epoch: number): Promise<Map<string, PostingRow>> {
  const cached = engine.cache.list(term)
  if (cached) return cached
  const list = new Map<string, PostingRow>()
  for (const [key, tf] of await readPostings(engine, term, 0, MAX_ENTRY_LEN, true)) list.set(key[0], postingOf(term, key, tf))
  engine.cache.keepList(term, list, epoch)
  return list
}

/** Frequencies up to this are read by length window in sorted access; higher ones (few documents) whole. */
export const WINDOWED_TF = 2

/**
 * The `[key, tf]` postings of a term: those at frequencies up to WINDOWED_TF
 * whose documents are `minLen`–`maxLen` long (one index range per frequency)
 * and, when `rest`, every posting at a higher frequency (the few at TF_CAP or
 * more are read for their exact frequency).
 */
export async function readPostings(engine: SearchEngine, term: string, minLen: number, maxLen: number, rest: boolean): Promise<Array<[DocKey, number]>> {
  const docs = engine.t.searchDocs
  const ranges: Promise<DocKey[]>[] = []
  for (let tf = 1; tf <= TF_CAP; tf++) {
    if (tf > WINDOWED_TF && !rest) break
    const [lower, upper] = tf > WINDOWED_TF ? bucketRange(term, tf) : bucketRange(term, tf, minLen, maxLen)
    ranges.push(docs.where('terms').between(lower, upper, true, true).primaryKeys())
  }
  const byTf = await Promise.all(ranges)
  const out: Array<[DocKey, number]> = []
  byTf.forEach((keys, i) => {
    if (i < TF_CAP - 1) for (const key of keys) out.push([key, i + 1])
  })
  const many = rest ? byTf[TF_CAP - 1]! : []
  if (many.length > 0) {
    const found = await docs.bulkGet(many)
    found.forEach((row, j) => {
      const at = row ? entryIndex(row, term) : -1
      if (at >= 0) out.push([many[j]!, row!.tfs[at]!])
    })
  }
  return out
}

async function corpusOf(engine: SearchEngine, projectId: string, epoch: number): Promise<CorpusStatsRow> {
  const cached = engine.cache.corpusOf(projectId)
  if (cached) return cached
  const row = (await engine.t.corpusStats.get(projectId)) ?? { projectId, docs: 0, length: 0 }
  engine.cache.keepCorpus(row, epoch)
  return row
}
