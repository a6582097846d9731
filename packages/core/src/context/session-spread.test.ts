import { describe, expect, it } from 'vitest'
import type { Hit } from '../search/types.js'
import { asksForSeveral, spreadOverSessions } from './session-spread.js'

const hit = (id: string, sessionId: string, score: number): Hit => ({ kind: 'message', id, projectId: 'p', sessionId, text: id, score, createdAt: 0 })

describe('answers spread over sessions', () => {
  it('knows a question about several events from one about one', () => {
    for (const q of ['Which restaurants did Nadia try this spring?', 'How many times did we go hiking?', 'What books did I finish?', 'List every trip we took'])
      expect(asksForSeveral(q), q).toBe(true)
    for (const q of ['Which restaurant did Nadia eat at in May?', 'What does my sister do?', 'What is the name of the cat?', 'Where is the house?'])
      expect(asksForSeveral(q), q).toBe(false)
  })

  it('keeps two hits a session at their rank, the rest after every session had its turn', () => {
    const hits = [hit('a1', 'A', 9), hit('a2', 'A', 8), hit('a3', 'A', 7), hit('a4', 'A', 6), hit('b1', 'B', 5), hit('c1', 'C', 4)]
    expect(spreadOverSessions('How many times did we eat out?', hits).map((h) => h.id)).toEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'a4'])
    expect(spreadOverSessions('Where did we eat?', hits).map((h) => h.id)).toEqual(hits.map((h) => h.id))
  })
})
