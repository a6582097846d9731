import { generateLongChats } from '../fixtures/long-chats.js'
import { loadFixture } from '../fixtures/recall-harness.js'
const loaded = await loadFixture(generateLongChats(100, 120))
const { memory, fixture, sessionId } = loaded
for (const fact of fixture.facts.slice(0, 60).filter((_, i) => i % 6 === 0)) {
  const row: string[] = []
  for (const budget of [1000, 2000, 4000]) {
    const c = await memory.context.build('fx', { sessionId, query: fact.question, budget })
    const rec = c.sections.find((s) => s.name === 'recalled')
    row.push(`${budget}: tokens ${c.tokens} recalled ${rec?.tokens} items ${rec?.items} ${c.text.includes(fact.evidence) ? 'IN' : 'out'}`)
  }
  console.log(fact.kind, fact.question, '\n  ', row.join('\n   '))
}
const hits = await memory.search('fx', fixture.facts[0]!.question, { limit: 20 })
console.log(hits.map((h) => `${h.score.toFixed(2)} ${h.text}`).join('\n'))
await memory.close()
