import { describe, expect, it } from 'vitest'
import { generateConversations } from '../../../../test/fixtures/conversations.js'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

const DAY = 24 * 3600 * 1000

/** Loads the recall fixture into a fresh store; returns the evidence message id of every fact. */
export async function loadFixture() {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'Fixture', id: 'fx' })
  const fixture = generateConversations()
  const evidence = new Map<number, string>()
  const start = clock.now()
  for (const session of fixture.sessions) {
    clock.set(start + session.day * DAY)
    const s = await memory.sessions.create('fx')
    for (const turn of session.turns) {
      clock.advance(30_000)
      const m = await memory.messages.append(s.id, { role: turn.role, content: turn.content })
      if (turn.evidenceOf !== undefined) evidence.set(turn.evidenceOf, m.id)
    }
  }
  clock.advance(DAY)
  return { memory, fixture, evidence, clock }
}

describe('recall on the conversation fixture', () => {
  it('finds the evidence turn (recall@5, @10) and puts it into context at 1k/2k/4k', async () => {
    const { memory, fixture, evidence } = await loadFixture()
    const now = await memory.sessions.create('fx')
    await memory.messages.appendExchange(now.id, 'Hi again, I have a quick question.', 'Of course, go ahead.')
    let at5 = 0
    let at10 = 0
    const inContext: Record<number, number> = { 1000: 0, 2000: 0, 4000: 0 }
    const misses: string[] = []
    for (const [i, fact] of fixture.facts.entries()) {
      const hits = await memory.search('fx', fact.question, { limit: 10 })
      const rank = hits.findIndex((h) => h.id === evidence.get(i))
      if (rank >= 0 && rank < 5) at5++
      if (rank >= 0) at10++
      else misses.push(fact.question)
      for (const budget of [1000, 2000, 4000]) {
        const c = await memory.context.build('fx', { sessionId: now.id, query: fact.question, budget })
        if (c.text.includes(fact.evidence)) inContext[budget]!++
      }
    }
    const n = fixture.facts.length
    console.log(
      `recall fixture (${n} questions): recall@5 ${(at5 / n).toFixed(2)}, recall@10 ${(at10 / n).toFixed(2)}, ` +
        `evidence in context 1k ${(inContext[1000]! / n).toFixed(2)}, 2k ${(inContext[2000]! / n).toFixed(2)}, 4k ${(inContext[4000]! / n).toFixed(2)}` +
        (misses.length ? `; missed: ${misses.join(' | ')}` : ''),
    )
    expect(at5 / n).toBeGreaterThanOrEqual(0.85)
    expect(at10 / n).toBeGreaterThanOrEqual(0.9)
    expect(inContext[4000]! / n).toBeGreaterThanOrEqual(0.9)
    expect(inContext[1000]! / n).toBeGreaterThanOrEqual(0.8)
    await memory.close()
  }, 120_000)
})
