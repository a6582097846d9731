import type { Hit } from '../types.js'

/**
 * The depths a search ranks at. The layers above BM25 (derived forms, the
 * time window, proximity, adjacent turns, fusion) weigh a list of candidates
 * whose length follows the depth, so two depths can order their best hits
 * differently. A search ranks at the first tier that holds its `limit`, and
 * above the first tier keeps what every shallower tier ranked first: the
 * first 20 hits are the tier-20 ranking's for every `limit`, hits 21–100 the
 * tier-100 ranking's next ones, and so on. So a smaller `limit` always
 * returns a prefix of a larger one, and the default limit ranks once.
 */
export const RANK_TIERS = [20, 100, 400, 1000] as const

const sameHit = (h: Hit) => `${h.kind}:${h.id}`

/**
 * Ranks `limit` hits tier by tier with `rankAt(cap)` (the best `cap` hits of
 * a ranking at that depth), keeping each tier's hits and appending the next
 * tier's that are new. Scores never rise down the list: a hit a deeper tier
 * scored above what precedes it keeps the score of the hit before it.
 */
export async function rankInTiers(limit: number, rankAt: (cap: number) => Promise<Hit[]>): Promise<Hit[]> {
  const out: Hit[] = []
  const taken = new Set<string>()
  for (const cap of RANK_TIERS) {
    const ranked = await rankAt(cap)
    for (const h of ranked) {
      if (out.length >= cap) break
      if (taken.has(sameHit(h))) continue
      taken.add(sameHit(h))
      const before = out.at(-1)
      out.push(before && h.score > before.score ? { ...h, score: before.score } : h)
    }
    // A tier that ran short holds every match: deeper tiers find no more.
    if (out.length >= limit || ranked.length < cap) break
  }
  return out.slice(0, limit)
}
