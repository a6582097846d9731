import { describe, expect, it } from 'vitest'
import type { Fact } from '../facts/facts.js'
import type { Hit } from '../search/types.js'
import { estimateTokenizer } from '../store/token-estimate.js'
import { seededRandom } from '../../../../test/fixtures/conversations.js'
import { factDrafts } from './fact-drafts.js'
import type { DraftItem } from './fit-budget.js'

/*
 * The kept order of the facts section, reused while the facts are the same objects, is the
 * order a sort of every fact by (rank among the hits, newest, shown order) gives, whatever the
 * facts and hits: checked against that sort on seeded random projects.
 */

const SEED = Number(process.env.SEED ?? Date.now() % 100_000)

function randomFacts(rand: () => number, n: number): Fact[] {
  return Array.from({ length: n }, (_, i) => {
    const projectId = rand() < 0.3 ? 'user' : 'p1'
    const key = `k${Math.floor(rand() * 1000)}.${i}`
    return {
      id: `${projectId}/${key}`,
      projectId,
      key,
      value: rand() < 0.5 ? `v${i}` : { n: i },
      confidence: 1,
      tags: [],
      createdAt: 0,
      updatedAt: Math.floor(rand() * 20),
      version: 1,
    }
  })
}

/** The order as a plain sort gives it (what the section did before it kept orders). */
function reference(facts: readonly Fact[], hits: readonly Hit[]): string[] {
  const rank = new Map(hits.filter((h) => h.kind === 'fact').map((h, i) => [`${h.projectId}\u0001${h.id}`, i]))
  const shown = [...facts].sort((a, b) => (a.projectId === b.projectId ? 0 : a.projectId === 'user' ? -1 : 1) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return shown
    .map((f, i) => ({ f, i, rank: rank.get(`${f.projectId}\u0001${f.id}`) ?? Infinity }))
    .sort((a, b) => a.rank - b.rank || b.f.updatedAt - a.f.updatedAt || a.i - b.i)
    .map((x) => x.f.key)
}

const owner = (projectId: string) => (projectId === 'user' ? 'user/' : '')
const clamp = (line: string, order: number): DraftItem => ({ line: line.slice(0, 20), tokens: 5, order })
const keyOf = (item: DraftItem) => item.line.replace(/^- (user\/)?/, '').split(':')[0]!

describe(`the facts section's order (SEED=${SEED})`, () => {
  it('is the sorted order, from a kept order or a new one', () => {
    const rand = seededRandom(SEED)
    for (let round = 0; round < 30; round++) {
      let facts = randomFacts(rand, 1 + Math.floor(rand() * 60))
      if (rand() < 0.5) facts = facts.sort(() => rand() - 0.5)
      for (let query = 0; query < 4; query++) {
        const hits: Hit[] = facts.filter(() => rand() < 0.2).map((f) => ({ kind: 'fact', id: f.id, projectId: f.projectId, text: '', score: 1, createdAt: 0 }))
        if (rand() < 0.3 && hits[0]) hits.push(hits[0])
        const items = factDrafts('p1', facts, hits, estimateTokenizer, 1000, owner, clamp)
        expect(items.map(keyOf), `round ${round}, query ${query}`).toEqual(reference(facts, hits))
      }
      // A changed fact (a new object) makes a new order.
      const changed = Math.floor(rand() * facts.length)
      facts = facts.map((f, i) => (i === changed ? { ...f, updatedAt: 100 } : f))
      expect(factDrafts('p1', facts, [], estimateTokenizer, 1000, owner, clamp).map(keyOf)).toEqual(reference(facts, []))
    }
  })
})
