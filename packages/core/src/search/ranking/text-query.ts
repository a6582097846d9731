import { firstOf, isBatch, memberAt, type StoredDocRow } from '../index/doc-batches.js'
import { B, compareCandidates, K1, type Candidate, type PostingFilter } from './bm25.js'
import { KIND_CODES, recordIdOf, type TextDocRow } from '../index/index-rows.js'
import type { IndexState } from '../index/index-state.js'
import { canStopAdding, gallop } from './max-score.js'
import { loadDirectories, readMergedList, segmentDoc } from '../index/merged-postings.js'
import type { PostingList } from '../index/posting-codec.js'
import type { SearchEngine } from '../types.js'

/** A query term with its live document frequency and idf. */
interface QueryTerm {
  term: string
  df: number
  idf: number
  list: PostingList | undefined
  tail: number[] /** Merged postings in `list` (those at or below the mark). */
  end: number
}

/** Scratch score accumulator indexed by document number (grown on demand, reset after each query). */
let scratch = new Float64Array(1 << 16)
let scratchKinds = new Uint8Array(1 << 16)
let scratchLens = new Uint32Array(1 << 16)
let scratchTouched = new Uint32Array(1 << 16)
/** Above this document number scores go to a Map instead (a sparse store should not allocate per number). */
const MAX_DENSE = 1 << 23

/**
 * Ranks documents of one project with Okapi BM25 for the query tokens and
 * returns the best `depth`, best first. Each term's merged postings are read
 * as a few blocks (and cached decoded), its unmerged postings come from the
 * in-memory tail; every posting is scored, which over decoded arrays costs
 * microseconds per thousand. Only the rows of the best documents are read.
 * Runs inside the caller's read transaction.
 */
export async function textCandidates(
  engine: SearchEngine,
  projectId: string,
  tokens: readonly string[],
  filter: PostingFilter,
  depth: number,
): Promise<Candidate[]> {
  const { state } = engine
  for (;;) {
    if (!state.ready) await engine.ready()
    const stats = state.stats(projectId)
    if (!stats || tokens.length === 0) return []
    const blockEpoch = state.blockEpoch
    await loadDirectories(engine, stats.q)
    const lists = await Promise.all(tokens.map((w) => mergedList(engine, stats.q, w)))
    // A merge committed while the blocks were read: the tail in memory no longer matches them.
    if (state.blockEpoch !== blockEpoch || !state.ready) continue
    // Session filters drop candidates after ranking: rank them all. Otherwise only the best `depth` need to be exact.
    const bySession = filter.sessionId !== undefined || filter.excludeSessionId !== undefined
    const ranked = rank(state, stats, tokens, lists, filter, bySession ? Infinity : depth)
    return await pick(engine, stats.q, ranked, filter, depth, () => rank(state, stats, tokens, lists, filter))
  }
}

/**
 * The merged postings of a term (cached while the blocks do not change; a
 * term without blocks is cached as an empty list, so the derived word forms a
 * query tries and the corpus lacks cost no read the next time).
 */
async function mergedList(engine: SearchEngine, q: number, w: string): Promise<PostingList | undefined> {
  const key = `${q}\u0001${w}`
  const cached = engine.state.list(key)
  if (cached) return cached.count > 0 ? cached : undefined
  const blockEpoch = engine.state.blockEpoch
  const list = await readMergedList(engine, q, w)
  engine.state.keepList(key, list, blockEpoch)
  return list.count > 0 ? list : undefined
}

/** Scored documents: numbers, scores, kind codes and lengths, in no particular order. */
interface Ranked {
  /** True when documents that could not reach the best `keep` were left out (see max-score.ts). */
  pruned?: boolean
  docs: Uint32Array
  scores: Float64Array
  kinds: Uint8Array
  lens: Uint32Array
}

/** Postings of a list at or below `mark` (lists are in increasing document number). */
function mergedEnd(list: PostingList, mark: number): number {
  let lo = 0
  let hi = list.count
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (list.docs[mid]! <= mark) lo = mid + 1
    else hi = mid
  }
  return lo
}

function rank(
  state: IndexState,
  stats: { q: number; docs: number; length: number },
  tokens: readonly string[],
  lists: ReadonlyArray<PostingList | undefined>,
  filter: PostingFilter,
  keep = Infinity,
): Ranked {
  const { mark, dead, tail } = state
  const checkDead = dead.size > 0
  const query: QueryTerm[] = []
  tokens.forEach((term, i) => {
    const list = lists[i]
    let df = 0
    let end = 0
    if (list) {
      end = mergedEnd(list, mark)
      df = end
      if (checkDead) for (let j = 0; j < end; j++) if (dead.has(list.docs[j]!)) df--
    }
    const tailDocs = (state.tailTerms.get(`${stats.q}\u0001${term}`) ?? []).filter((n) => tail.has(n))
    df += tailDocs.length
    if (df === 0) return
    const n = Math.max(stats.docs, df)
    query.push({ term, df, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)), list, tail: tailDocs, end })
  })
  query.sort((a, b) => a.df - b.df || (a.term < b.term ? -1 : 1))
  const avgLength = stats.docs > 0 ? Math.max(1, stats.length / stats.docs) : 1
  const lengthWeight = (K1 * B) / avgLength
  const constant = K1 * (1 - B)
  const kindOk = filter.kinds ? KIND_CODES.map((k) => filter.kinds!.has(k)) : undefined

  let top = 0
  let total = 0
  for (const q of query) {
    if (q.list && q.end > 0) top = Math.max(top, q.list.docs[q.end - 1]!)
    for (const n of q.tail) top = Math.max(top, n)
    total += q.end + q.tail.length
  }
  if (top >= MAX_DENSE) return rankSparse(state, query, lengthWeight, constant, kindOk)
  if (top >= scratch.length) {
    let size = scratch.length
    while (size <= top) size *= 2
    scratch = new Float64Array(size)
    scratchKinds = new Uint8Array(size)
    scratchLens = new Uint32Array(size)
  }
  const sc = scratch
  const sk = scratchKinds
  const sl = scratchLens
  // The numbers scored, in scratch too: a query over long lists would otherwise allocate (and collect) megabytes.
  if (scratchTouched.length < total) scratchTouched = new Uint32Array(Math.max(total, scratchTouched.length * 2))
  const touched = scratchTouched
  let count = 0
  // What the terms not scored yet could add to a document at most, and whether the rest only adds to scored documents.
  let remaining = query.reduce((sum, q) => sum + q.idf * (K1 + 1), 0)
  let pruned = false
  let sorted: Uint32Array | undefined
  for (const q of query) {
    const factor = q.idf * (K1 + 1)
    const list = q.list
    const size = q.end + q.tail.length
    // Worth checking only before a list much longer than what is scored (rarest terms come first).
    if (!pruned && count >= keep && size > 4 * count && canStopAdding(scoresOf(sc, touched, count), count, keep, remaining)) {
      pruned = true
      sorted = touched.slice(0, count).sort()
    }
    remaining -= factor
    if (pruned) {
      addToScored(sc, sorted!, q, factor, constant, lengthWeight, state)
      continue
    }
    if (list) {
      const { docs, tfs, kinds, lens } = list
      for (let j = 0; j < q.end; j++) {
        const n = docs[j]!
        if (checkDead && dead.has(n)) continue
        const kind = kinds[j]!
        if (kindOk && !kindOk[kind]) continue
        const tf = tfs[j]!
        const len = lens[j]!
        const w = (factor * tf) / (tf + constant + lengthWeight * len)
        const before = sc[n]!
        // A weight is never 0 for tf ≥ 1, so 0 in the scratch means "not scored yet".
        if (before === 0) {
          touched[count++] = n
          sk[n] = kind
          sl[n] = len
        }
        sc[n] = before + w
      }
    }
    for (const n of q.tail) {
      const doc = tail.get(n)!
      if (kindOk && !kindOk[doc.k]) continue
      const tf = doc.tfs[doc.terms.indexOf(q.term)]!
      const w = (factor * tf) / (tf + constant + lengthWeight * doc.l)
      const before = sc[n]!
      if (before === 0) {
        touched[count++] = n
        sk[n] = doc.k
        sl[n] = doc.l
      }
      sc[n] = before + w
    }
  }
  const out: Ranked = {
    docs: touched.slice(0, count),
    scores: new Float64Array(count),
    kinds: new Uint8Array(count),
    lens: new Uint32Array(count),
    pruned,
  }
  for (let i = 0; i < count; i++) {
    const n = touched[i]!
    out.scores[i] = sc[n]!
    out.kinds[i] = sk[n]!
    out.lens[i] = sl[n]!
    sc[n] = 0
  }
  return out
}

/** The partial scores of the documents scored so far, in scratch order. */
function scoresOf(sc: Float64Array, touched: Uint32Array, count: number): Float64Array {
  const out = new Float64Array(count)
  for (let i = 0; i < count; i++) out[i] = sc[touched[i]!]!
  return out
}

/**
 * Adds a term's weights to documents already scored (`sorted`, by number) and
 * to no other: galloping through a long list past the few it holds, or one
 * pass when they are many. Dead and filtered documents were never scored.
 */
function addToScored(sc: Float64Array, sorted: Uint32Array, q: QueryTerm, factor: number, constant: number, lengthWeight: number, state: IndexState): void {
  const list = q.list
  if (list && q.end > 0) {
    const { docs, tfs, lens } = list
    const end = q.end
    const add = (j: number) => {
      const tf = tfs[j]!
      sc[docs[j]!] = sc[docs[j]!]! + (factor * tf) / (tf + constant + lengthWeight * lens[j]!)
    }
    if (sorted.length * Math.log2(end + 1) < end) {
      let j = 0
      for (const n of sorted) {
        j = gallop(docs, j, end, n)
        if (j >= end) break
        if (docs[j] === n) add(j)
      }
    } else for (let j = 0; j < end; j++) if (sc[docs[j]!] !== 0) add(j)
  }
  for (const n of q.tail) {
    if (sc[n] === 0) continue
    const doc = state.tail.get(n)!
    const tf = doc.tfs[doc.terms.indexOf(q.term)]!
    sc[n] = sc[n]! + (factor * tf) / (tf + constant + lengthWeight * doc.l)
  }
}

/** The same scoring into maps, for stores whose document numbers grew too large for a dense scratch array. */
function rankSparse(state: IndexState, query: readonly QueryTerm[], lengthWeight: number, constant: number, kindOk: boolean[] | undefined): Ranked {
  const { dead, tail } = state
  const acc = new Map<number, { s: number; k: number; l: number }>()
  const add = (n: number, kind: number, len: number, w: number) => {
    const a = acc.get(n)
    if (a) a.s += w
    else acc.set(n, { s: w, k: kind, l: len })
  }
  for (const q of query) {
    const factor = q.idf * (K1 + 1)
    if (q.list) {
      const { docs, tfs, kinds, lens } = q.list
      for (let j = 0; j < q.end; j++) {
        if (dead.has(docs[j]!) || (kindOk && !kindOk[kinds[j]!])) continue
        add(docs[j]!, kinds[j]!, lens[j]!, (factor * tfs[j]!) / (tfs[j]! + constant + lengthWeight * lens[j]!))
      }
    }
    for (const n of q.tail) {
      const doc = tail.get(n)!
      if (kindOk && !kindOk[doc.k]) continue
      const tf = doc.tfs[doc.terms.indexOf(q.term)]!
      add(n, doc.k, doc.l, (factor * tf) / (tf + constant + lengthWeight * doc.l))
    }
  }
  const out: Ranked = { docs: new Uint32Array(acc.size), scores: new Float64Array(acc.size), kinds: new Uint8Array(acc.size), lens: new Uint32Array(acc.size) }
  let i = 0
  for (const [n, a] of acc) {
    out.docs[i] = n
    out.scores[i] = a.s
    out.kinds[i] = a.k
    out.lens[i] = a.l
    i++
  }
  return out
}

/** Positions of the `k` best scores (higher score, then higher document number), best first. */
function bestPositions(r: Ranked, k: number, skip: ReadonlySet<number>): number[] {
  const { scores, docs } = r
  const better = (i: number, j: number) => scores[i]! > scores[j]! || (scores[i] === scores[j] && docs[i]! > docs[j]!)
  const top: number[] = []
  let floor = -Infinity // the k-th best score once the top is full: anything lower cannot enter
  for (let i = 0; i < docs.length; i++) {
    if (scores[i]! < floor || (top.length === k && !better(i, top[k - 1]!)) || skip.has(i)) continue
    let at = top.length
    while (at > 0 && better(i, top[at - 1]!)) at--
    top.splice(at, 0, i)
    if (top.length > k) top.pop()
    if (top.length === k) floor = scores[top[k - 1]!]!
  }
  return top
}

/**
 * Turns the best scored documents into candidates: takes their id and time
 * from the document cache or their rows, applies session filters (from the
 * records), and reads further down the ranking until `depth` pass. Equal
 * scores rank the later-written document first.
 */
async function pick(engine: SearchEngine, q: number, r: Ranked, filter: PostingFilter, depth: number, all: () => Ranked): Promise<Candidate[]> {
  const out: Candidate[] = []
  let taken = new Set<number>()
  const bySession = filter.sessionId !== undefined || filter.excludeSessionId !== undefined
  const { state } = engine
  let want = depth
  while (out.length < depth && (taken.size < r.docs.length || r.pruned)) {
    if (r.pruned && taken.size > 0) {
      // Reading past the best `depth` (some were gone or filtered out): the ranking of every document is needed.
      const before = r
      r = all()
      const docs = new Set(Array.from(taken, (i) => before.docs[i]!))
      taken = new Set()
      r.docs.forEach((n, i) => {
        if (docs.has(n)) taken.add(i)
      })
      continue
    }
    const batch = bestPositions(r, want, taken)
    if (batch.length === 0) break
    for (const i of batch) taken.add(i)
    // From memory (the tail, documents met before, segment directories); the rest from their rows.
    const lookup = (n: number) => state.doc(n) ?? segmentDoc(engine, q, n)
    const known = batch.map((i) => lookup(r.docs[i]!))
    const missing = batch.filter((_, j) => known[j] === undefined)
    // A batch row is keyed by its last document: the first row at or above a number holds it.
    const rows = missing.length > 0 ? await Promise.all(missing.map((i) => firstRowFrom(engine, r.docs[i]!))) : []
    rows.forEach((row: TextDocRow | undefined, j) => {
      if (row && row.d !== undefined && row.x === undefined) state.keepDoc(row.n!, row.d, row.a)
      else {
        // Removed without a marker yet: skipped from now on (the next merge records it).
        const i = missing[j]!
        state.discover({ n: r.docs[i]!, q, l: r.lens[i]! })
      }
    })
    let found: Candidate[] = []
    for (const i of batch) {
      const doc = lookup(r.docs[i]!)
      if (doc) found.push({ docId: doc.d, kind: KIND_CODES[r.kinds[i]!]!, at: doc.a, score: r.scores[i]! })
    }
    if (bySession) found = await withSessions(engine, found, filter)
    out.push(...found)
    want = Math.max(depth, want * 2)
  }
  return out.sort(compareCandidates).slice(0, depth)
}

/** The row of document `n` within the stored row at or above it (a batch row is keyed by its last document). */
export function docAt(row: StoredDocRow | undefined, n: number): TextDocRow | undefined {
  if (!row) return undefined
  if (!isBatch(row)) return row.n === n ? row : undefined
  const i = n - firstOf(row)
  if (i < 0 || i >= row.m) return undefined
  return memberAt(row, i, row.r && row.r.length > 0 ? new Set(row.r) : undefined)
}

/** The row of document `n` (a member of a batch as a single row), if stored. */
function firstRowFrom(engine: SearchEngine, n: number): Promise<TextDocRow | undefined> {
  return engine.t.textDocs
    .where(':id')
    .aboveOrEqual(n)
    .first()
    .then((row) => docAt(row, n))
}

/** Sets each candidate's session from its record and keeps those the session filters allow. */
async function withSessions(engine: SearchEngine, candidates: Candidate[], filter: PostingFilter): Promise<Candidate[]> {
  const messages = candidates.filter((c) => c.kind === 'message')
  const summaries = candidates.filter((c) => c.kind === 'summary')
  const observations = candidates.filter((c) => c.kind === 'observation')
  const [m, s, o] = await Promise.all([
    messages.length ? engine.db.messages.bulkGet(messages.map((c) => recordIdOf(c.docId, 'message'))) : [],
    summaries.length ? engine.db.summaries.bulkGet(summaries.map((c) => recordIdOf(c.docId, 'summary'))) : [],
    observations.length
      ? engine.db.table<{ sessionId: string }, string>('observations').bulkGet(observations.map((c) => recordIdOf(c.docId, 'observation')))
      : [],
  ])
  messages.forEach((c, i) => {
    const sid = m[i]?.sessionId
    if (sid !== undefined) c.sid = sid
  })
  summaries.forEach((c, i) => {
    const sid = s[i]?.sessionId
    if (sid !== undefined) c.sid = sid
  })
  observations.forEach((c, i) => {
    const sid = o[i]?.sessionId
    if (sid !== undefined) c.sid = sid
  })
  return candidates.filter((c) => {
    if (filter.sessionId !== undefined && c.sid !== filter.sessionId) return false
    return filter.excludeSessionId === undefined || c.sid !== filter.excludeSessionId
  })
}
