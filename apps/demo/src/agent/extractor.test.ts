import { describe, expect, it } from 'vitest'
import { extractMemory } from './extractor.js'
import { keyOf, parseIntent } from './intent.js'
import { scriptedReply } from './scripted-agent.js'

const exchange = (prompt: string) => ({ prompt })
const emptyContext = { sections: [], text: '', tokens: 0, omitted: [] }

describe('rule-based extractor', () => {
  it('turns "remember that X is Y" into a fact write with a slug key', () => {
    expect(extractMemory(exchange('Remember that my favourite colour is teal.'))).toEqual([
      { op: 'fact.set', key: 'favourite_colour', value: 'teal', confidence: 0.9, tags: ['chat'] },
    ])
  })

  it('turns "forget X" into a fact delete, and handles several sentences', () => {
    expect(extractMemory(exchange('Forget my favourite colour. Remember that my age is 42!'))).toEqual([
      { op: 'fact.delete', key: 'favourite_colour' },
      { op: 'fact.set', key: 'age', value: 42, confidence: 0.9, tags: ['chat'] },
    ])
  })

  it('keeps hostile text as a plain string value', () => {
    const [op] = extractMemory(exchange('remember that the payload is <img src=x onerror=alert(1)>'))
    expect(op).toMatchObject({ op: 'fact.set', key: 'payload', value: '<img src=x onerror=alert(1)>' })
  })

  it('writes nothing for questions and small talk', () => {
    expect(extractMemory(exchange('What is my favourite colour?'))).toEqual([])
    expect(extractMemory(exchange('hello there'))).toEqual([])
  })

  it('stores a bare "remember …" as a note', () => {
    expect(extractMemory(exchange('Remember to buy milk'))[0]).toMatchObject({ op: 'fact.set', key: 'note_to_buy_milk', value: 'to buy milk' })
    expect(extractMemory(exchange('Remember that I like jazz'))[0]).toMatchObject({ op: 'fact.set', key: 'note_i_like_jazz', value: 'I like jazz' })
  })
})

describe('intents and the scripted agent', () => {
  it('slugs keys', () => {
    expect(keyOf('My Home City')).toBe('home_city')
    expect(keyOf('   ')).toBe('note')
  })

  it('answers a question from the facts it was given', () => {
    expect(parseIntent('what is my home city?')).toEqual({ kind: 'ask', key: 'home_city', subject: 'my home city' })
    const facts = [{ id: 'f1', projectId: 'user', key: 'home_city', value: 'Lisbon', confidence: 1, tags: [], createdAt: 0, updatedAt: 0, version: 2 }]
    expect(scriptedReply({ prompt: 'What is my home city?', context: emptyContext, facts })).toBe('Your home city is Lisbon (fact "home_city").')
    expect(scriptedReply({ prompt: 'What is my shoe size?', context: emptyContext, facts })).toContain("don't know")
  })

  it('relates a named person to where they work or live; "I" and "my …" are not names', () => {
    expect(extractMemory(exchange('Dana now works at Initech. Sam lives in Porto!'))).toEqual([
      { op: 'entity.upsert', name: 'Dana', type: 'person' },
      { op: 'relation.add', subject: 'Dana', predicate: 'works_at', object: 'Initech', objectType: 'organisation' },
      { op: 'entity.upsert', name: 'Sam', type: 'person' },
      { op: 'relation.add', subject: 'Sam', predicate: 'lives_in', object: 'Porto', objectType: 'place' },
    ])
    expect(extractMemory(exchange('I work at Acme. My sister works at Acme. Remember that my city is Porto'))).toEqual([
      { op: 'fact.set', key: 'city', value: 'Porto', confidence: 0.9, tags: ['chat'] },
    ])
    expect(scriptedReply({ prompt: 'Dana works at Acme.', context: emptyContext, facts: [] })).toBe('Noted: Dana works at Acme (see the knowledge panel).')
  })
})
