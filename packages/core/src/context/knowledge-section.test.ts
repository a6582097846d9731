import { describe, expect, it } from 'vitest'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

const MARCH = Date.UTC(2026, 2, 1)
const MAY = Date.UTC(2026, 4, 1)
const JUNE = Date.UTC(2026, 5, 1)

async function dana() {
  const memory = await openTestMemory({ now: testClock(Date.UTC(2026, 6, 1)).now })
  await memory.projects.create({ id: 'p', name: 'P' })
  const person = await memory.entities.upsert('p', { name: 'Dana Reyes', type: 'person', aliases: ['Dee'] })
  const acme = await memory.entities.upsert('p', { name: 'Acme', type: 'organisation' })
  const initech = await memory.entities.upsert('p', { name: 'Initech', type: 'organisation' })
  await memory.relations.add('p', { subject: person.id, predicate: 'works_at', object: acme.id, validFrom: MARCH })
  await memory.relations.add('p', { subject: person.id, predicate: 'works_at', object: initech.id, validFrom: JUNE })
  await memory.relations.add('p', { subject: person.id, predicate: 'likes', value: 'bouldering', validFrom: MARCH })
  return memory
}

const section = (c: { sections: { name: string; text: string }[] }) => c.sections.find((s) => s.name === 'knowledge')?.text

describe('context.build: the knowledge section', () => {
  it('shows the current relations of the entities the query names, through aliases, with their validity', async () => {
    const memory = await dana()
    const built = await memory.context.build('p', { query: 'Where does dee work now?', budget: 2000 })
    expect(section(built)).toBe(
      ['<knowledge>', '- Dana Reyes works_at Initech (since 2026-06-01)', '- Dana Reyes likes "bouldering" (since 2026-03-01)', '</knowledge>'].join('\n'),
    )
    expect(built.sections.map((s) => s.name)).toContain('knowledge')
    // A query naming no entity has no knowledge section.
    expect(section(await memory.context.build('p', { query: 'what is the weather', budget: 2000 }))).toBeUndefined()
  })

  it('shows what was true then in an as-of build', async () => {
    const memory = await dana()
    const may = await memory.context.build('p', { query: 'Where did Dana Reyes work in May?', budget: 2000, asOf: MAY, sections: ['knowledge'] })
    expect(may.text).toBe(
      [
        '<knowledge>',
        '- (as of 2026-05-01)',
        '- Dana Reyes works_at Acme (2026-03-01 to 2026-06-01)',
        '- Dana Reyes likes "bouldering" (since 2026-03-01)',
        '</knowledge>',
      ].join('\n'),
    )
    expect((await memory.context.build('p', { query: 'acme', budget: 2000, asOf: MAY, sections: ['knowledge'] })).text).toContain('Dana Reyes works_at Acme')
    expect((await memory.context.build('p', { query: 'acme', budget: 2000, sections: ['knowledge'] })).text).toBe('')
  })

  it('keeps within its share of a small budget and says what it left out; refuses a bad asOf', async () => {
    const memory = await dana()
    const full = await memory.context.build('p', { query: 'dana reyes', budget: 2000, sections: ['knowledge'] })
    const budget = full.tokens - 5
    const built = await memory.context.build('p', { query: 'dana reyes', budget, sections: ['knowledge'] })
    expect(built.tokens).toBeLessThanOrEqual(budget)
    expect(built.sections.map((s) => [s.name, s.items])).toEqual([['knowledge', 1]])
    expect(built.text).toContain('works_at Initech')
    expect(built.omitted).toEqual([{ name: 'knowledge', items: 1, reason: 'over budget' }])
    for (const asOf of [-1, 'May', 1.5])
      await expect(memory.context.build('p', { query: 'dana', budget: 100, asOf: asOf as never })).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('finds entities the text names, first named first, one lookup for the text', async () => {
    const memory = await dana()
    const found = await memory.entities.mentioned('p', 'Did INITECH hire dána reyes after Acme?')
    expect(found.map((e) => e.name)).toEqual(['Initech', 'Dana Reyes', 'Acme'])
    expect(await memory.entities.mentioned('p', 'nobody here')).toEqual([])
    await expect(memory.entities.mentioned('p', 'x'.repeat(10_001))).rejects.toMatchObject({ code: 'limit_exceeded' })
  })
})
