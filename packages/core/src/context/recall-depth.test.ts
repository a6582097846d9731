import { describe, expect, it } from 'vitest'
import type { Memory } from '@engram/core'
import { generateDialogues } from '../../../../test/fixtures/dialogues.js'
import { generateLongChats } from '../../../../test/fixtures/long-chats.js'
import { evaluateRecall, loadFixture } from '../../../../test/fixtures/recall-harness.js'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

const recalledLines = (c: Awaited<ReturnType<Memory['context']['build']>>) =>
  c.sections
    .find((s) => s.name === 'recalled')
    ?.text.split('\n')
    .slice(1, -1) ?? []

async function store() {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now })
  await memory.projects.create({ name: 'P', id: 'p1' })
  const s = await memory.sessions.create('p1')
  const say = async (role: 'user' | 'assistant', content: string) => {
    clock.advance(1000)
    return memory.messages.append(s.id, { role, content })
  }
  return { memory, say, clock }
}

describe('recalled section depth', () => {
  it('beats the naive baselines on a held-out dialogue set: search beside MiniSearch, context beside a greedy fill', async () => {
    const loaded = await loadFixture(generateDialogues(23, 40))
    const r = await evaluateRecall(loaded)
    console.log(
      `dialogues seed 23: recall@10 ${r.recallAt10.toFixed(2)} (MiniSearch ${r.miniRecallAt10.toFixed(2)}), in context 1k/2k/4k ${[1000, 2000, 4000].map((b) => r.inContext[b]!.toFixed(2)).join('/')} (greedy ${[1000, 2000, 4000].map((b) => r.greedyInContext[b]!.toFixed(2)).join('/')})`,
    )
    expect(r.recallAt10).toBeGreaterThanOrEqual(1.25 * r.miniRecallAt10)
    expect(r.inContext[4000]!).toBeGreaterThanOrEqual(1.15 * r.greedyInContext[4000]!)
    expect(r.inContext[1000]!).toBeLessThanOrEqual(r.inContext[2000]!)
    expect(r.inContext[2000]!).toBeLessThanOrEqual(r.inContext[4000]!)
    await loaded.memory.close()
  }, 120_000)

  it('beats the naive baselines on held-out long chats with dates, and evidence in context grows from 1k to 4k', async () => {
    const loaded = await loadFixture(generateLongChats(200, 60))
    const r = await evaluateRecall(loaded)
    console.log(
      `long chats seed 200: recall@10 ${r.recallAt10.toFixed(2)} (MiniSearch ${r.miniRecallAt10.toFixed(2)}), in context 1k/2k/4k ${[1000, 2000, 4000].map((b) => r.inContext[b]!.toFixed(2)).join('/')} (greedy ${[1000, 2000, 4000].map((b) => r.greedyInContext[b]!.toFixed(2)).join('/')})`,
    )
    expect(r.recallAt10).toBeGreaterThanOrEqual(1.25 * r.miniRecallAt10)
    expect(r.inContext[4000]!).toBeGreaterThanOrEqual(1.15 * r.greedyInContext[4000]!)
    expect(r.inContext[1000]!).toBeLessThanOrEqual(r.inContext[2000]!)
    expect(r.inContext[2000]!).toBeLessThanOrEqual(r.inContext[4000]!)
    // Temporal questions: the month named in the question finds the turn told then.
    expect(r.byKind.temporal!.inContext[4000] ?? 0).toBeGreaterThan(0)
    await loaded.memory.close()
  }, 120_000)

  it('holds more evidence and more recalled text as the budget grows, until the relevant memory is exhausted', async () => {
    const loaded = await loadFixture(generateDialogues(5, 30))
    const { memory, fixture, sessionId } = loaded
    const budgets = [300, 600, 1000, 2000, 4000, 8000]
    const evidence = budgets.map(() => 0)
    for (const fact of fixture.facts.slice(0, 8)) {
      let previousTokens = 0
      for (const [i, budget] of budgets.entries()) {
        const c = await memory.context.build('fx', { sessionId, query: fact.question, budget })
        if (c.text.includes(fact.evidence)) evidence[i]!++
        const tokens = c.sections.find((s) => s.name === 'recalled')?.tokens ?? 0
        expect(tokens, `${fact.question} at ${budget}`).toBeGreaterThanOrEqual(previousTokens)
        previousTokens = tokens
      }
    }
    for (let i = 1; i < budgets.length; i++) expect(evidence[i]).toBeGreaterThanOrEqual(evidence[i - 1]!)
    expect(evidence[0]).toBeLessThan(evidence.at(-1)!)
    await memory.close()
  }, 60_000)

  it('keeps the same order for the same memory and query, and a smaller budget shows a subsequence of a larger one', async () => {
    const loaded = await loadFixture(generateDialogues(5, 20))
    const { memory, sessionId } = loaded
    const query = 'How did the pottery workshop go with the instructor?'
    const a = await memory.context.build('fx', { sessionId, query, budget: 4000 })
    const b = await memory.context.build('fx', { sessionId, query, budget: 4000 })
    expect(b.text).toBe(a.text)
    const large = recalledLines(a)
    const small = recalledLines(await memory.context.build('fx', { sessionId, query, budget: 1500 }))
    expect(small.length).toBeGreaterThan(0)
    const positions = small.map((line) => large.indexOf(line)).filter((p) => p >= 0)
    expect(positions.length).toBeGreaterThan(0)
    expect(positions).toEqual([...positions].sort((x, y) => x - y))
    await memory.close()
  }, 60_000)

  it('drops near-duplicates of a better hit', async () => {
    const { memory, say } = await store()
    await say('user', 'The spare key for the allotment shed is under the blue flower pot.')
    await say('user', 'The spare key for the allotment shed is under the blue flower pot!')
    await say('user', 'Reminder: the spare key for the allotment shed is under the blue flower pot.')
    await say('user', 'The allotment committee meets on the first Monday of the month.')
    const c = await memory.context.build('p1', { query: 'where is the spare key for the allotment shed', budget: 4000 })
    const lines = recalledLines(c)
    expect(lines.filter((l) => l.includes('spare key'))).toHaveLength(1)
    await memory.close()
  })

  it('reads deeper when near-duplicates starve the section, so a large budget still reaches a weaker match', async () => {
    const { memory, say } = await store()
    await say('user', 'The gate code is 4471.')
    for (let i = 0; i < 150; i++) await say('user', `The garden gate hinge squeaks and needs oil ${i % 2 ? 'again' : 'still'}.`)
    for (let i = 0; i < 100; i++) await say('user', `Unrelated note ${i} about groceries and the weather.`)
    const query = 'garden gate hinge oil'
    const all = await memory.search('p1', query, { limit: 1000 })
    expect(all.findIndex((h) => h.text.startsWith('The gate code'))).toBeGreaterThan(100)
    // The budget alone asks for 67 hits (4000 / 60): only reading deeper reaches rank 150.
    const large = recalledLines(await memory.context.build('p1', { query, budget: 4000 }))
    expect(large.some((l) => l.includes('The gate code'))).toBe(true)
    expect(large.filter((l) => l.includes('hinge squeaks')).length).toBeLessThanOrEqual(2)
    await memory.close()
  })

  it('ends at the score cliff: a weak match does not fill spare budget', async () => {
    const { memory, say } = await store()
    await say('user', 'My violin teacher Amara moved her lessons to Thursday evenings at the conservatory on Quarry Lane, room twelve.')
    for (let i = 0; i < 5; i++) await say('user', `Shopping list ${i}: apples, oats and coffee.`)
    await say('user', 'Swimming lessons for the kids start in May.')
    const query = 'violin teacher Amara lessons Thursday evenings conservatory Quarry Lane room twelve'
    expect((await memory.search('p1', query)).map((h) => h.text)).toContain('Swimming lessons for the kids start in May.')
    const lines = recalledLines(await memory.context.build('p1', { query, budget: 8000 }))
    expect(lines.some((l) => l.includes('Amara'))).toBe(true)
    expect(lines.some((l) => l.includes('Swimming'))).toBe(false)
    await memory.close()
  })

  it('brings the turns adjacent to strong message hits, in search (the best few) and in context (more)', async () => {
    const { memory, say } = await store()
    const answers = ['the brass padlock', 'a new hinge', 'green paint', 'a taller latch', 'a spring closer']
    for (const [i, answer] of answers.entries()) {
      await say('user', `Busy week ${i}, lots going on.`)
      await say('assistant', `Did the locksmith manage to fix the garden gate, part ${i}?`)
      await say('user', `Yes, this time it got ${answer}.`)
      for (let j = 0; j < 3; j++) await say('user', `Unrelated note ${i}.${j} about groceries and the weather.`)
    }
    const query = 'what did the locksmith do with the garden gate'
    const found = (await memory.search('p1', query)).map((h) => h.text)
    expect(answers.filter((a) => found.includes(`Yes, this time it got ${a}.`)).length).toBeGreaterThanOrEqual(3)
    const recalled = (await memory.context.build('p1', { query, budget: 2000 })).sections.find((s) => s.name === 'recalled')?.text ?? ''
    for (const a of answers) expect(recalled).toContain(`Yes, this time it got ${a}.`)
    await memory.close()
  })

  it('brings the answer two turns after a hit (after a follow-up question) at a larger budget, the reply first', async () => {
    const { memory, say } = await store()
    for (let i = 0; i < 6; i++) await say('user', `Filler ${i}: the weather, groceries and a long walk in the park.`)
    await say('user', 'We put an offer on a house today.')
    await say('assistant', 'Exciting, where is it?')
    await say('user', 'In Haarlem, a narrow brick one by the canal.')
    for (let i = 0; i < 6; i++) await say('user', `Filler ${i + 6}: more weather, more groceries, another walk.`)
    const query = 'Where is the house we made an offer on?'
    const lines = recalledLines(await memory.context.build('p1', { query, budget: 2000 }))
    const at = (text: string) => lines.findIndex((l) => l.includes(text))
    expect(at('In Haarlem')).toBeGreaterThan(at('Exciting, where is it?'))
    expect(at('Exciting, where is it?')).toBeGreaterThan(at('We put an offer'))
    expect(at('We put an offer')).toBeGreaterThanOrEqual(0)
    // As the budget grows the nearer neighbour comes first: never the answer two turns on without the reply between.
    let replyOnly = 0
    for (let budget = 20; budget <= 200; budget += 5) {
      const some = recalledLines(await memory.context.build('p1', { query, budget, sections: ['recalled'] }))
      const reply = some.some((l) => l.includes('Exciting, where is it?'))
      const answer = some.some((l) => l.includes('In Haarlem'))
      if (answer) expect(reply, `at ${budget}`).toBe(true)
      if (reply && !answer) replyOnly++
    }
    expect(replyOnly).toBeGreaterThan(0)
    await memory.close()
  })
})
