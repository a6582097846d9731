import { describe, expect, it } from 'vitest'
import type { Change, Message } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

async function setup(options: Parameters<typeof openTestMemory>[0] = {}) {
  const clock = testClock()
  const memory = await openTestMemory({ now: clock.now, ...options })
  await memory.projects.create({ name: 'P', id: 'p' })
  const session = await memory.sessions.create('p', { id: 's' })
  return { clock, memory, session }
}

describe('messages', () => {
  it('appends with seq, tokens, meta and bumps lastActiveAt', async () => {
    const { clock, memory } = await setup()
    clock.advance(100)
    const m = await memory.messages.append('s', { role: 'system', content: 'Be brief.', meta: { model: 'x', n: [1, 2] } })
    expect(m).toEqual({
      id: m.id,
      sessionId: 's',
      projectId: 'p',
      seq: 1,
      role: 'system',
      content: 'Be brief.',
      tokens: 3,
      createdAt: clock.now(),
      meta: { model: 'x', n: [1, 2] },
    })
    const empty = await memory.messages.append('s', { role: 'tool', content: '' })
    expect(empty).toMatchObject({ seq: 2, tokens: 0 })
    expect(empty).not.toHaveProperty('meta')
    expect(await memory.sessions.get('s')).toMatchObject({ lastActiveAt: clock.now() })
  })

  it('uses the injected tokenizer', async () => {
    const { memory } = await setup({ tokenizer: { count: (t) => t.split(' ').length } })
    expect((await memory.messages.append('s', { role: 'user', content: 'a b c d e' })).tokens).toBe(5)
  })

  it('reports a throwing tokenizer as a MemoryError and writes nothing', async () => {
    const { memory } = await setup({
      tokenizer: {
        count: () => {
          throw new TypeError('boom')
        },
      },
    })
    await expect(memory.messages.append('s', { role: 'user', content: 'x' })).rejects.toMatchObject({
      name: 'MemoryError',
      code: 'internal',
      cause: expect.any(TypeError),
    })
    expect(await memory.messages.tail('s', 10)).toEqual([])
  })

  it('appends an exchange in one transaction and one change batch', async () => {
    const { memory } = await setup()
    const batches: Change[][] = []
    await memory.changes.subscribe({}, (b) => batches.push(b))
    const [u, a] = await memory.messages.appendExchange('s', 'Hi?', 'Hello!')
    expect([u.role, u.seq, u.content, a.role, a.seq, a.content]).toEqual(['user', 1, 'Hi?', 'assistant', 2, 'Hello!'])
    expect(batches).toHaveLength(1)
    expect(batches[0]).toEqual([
      { kind: 'messages', op: 'put', id: u.id, projectId: 'p', origin: 'local' },
      { kind: 'messages', op: 'put', id: a.id, projectId: 'p', origin: 'local' },
      { kind: 'sessions', op: 'put', id: 's', projectId: 'p', origin: 'local' },
    ])
  })

  it('keeps seq gap-free under 100 concurrent appends', async () => {
    const { memory } = await setup()
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => memory.messages.append('s', { role: 'user', content: `m${i}` })))
    expect(results.map((m) => m.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
    const all = await memory.messages.page('s', { limit: 1000 })
    expect(all.items.map((m) => m.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
    expect(new Set(all.items.map((m) => m.id)).size).toBe(100)
  })

  it('interleaves concurrent exchanges and appends without gaps', async () => {
    const { memory } = await setup()
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => memory.messages.appendExchange('s', `q${i}`, `a${i}`)),
      ...Array.from({ length: 10 }, (_, i) => memory.messages.append('s', { role: 'tool', content: `t${i}` })),
    ])
    const items = (await memory.messages.page('s', { limit: 100 })).items
    expect(items.map((m) => m.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    for (const m of items.filter((x) => x.role === 'user')) {
      expect(items[m.seq]).toMatchObject({ role: 'assistant', content: m.content.replace('q', 'a') })
    }
  })

  it('rejects bad input, unknown and closed sessions, writing nothing', async () => {
    const { memory } = await setup()
    await memory.sessions.create('p', { id: 'closed' })
    await memory.sessions.close('closed')
    const seen: Change[] = []
    await memory.changes.subscribe({}, (b) => seen.push(...b))
    const bad: [() => Promise<unknown>, string][] = [
      [() => memory.messages.append('nope', { role: 'user', content: 'x' }), 'not_found'],
      [() => memory.messages.append('closed', { role: 'user', content: 'x' }), 'conflict'],
      [() => memory.messages.appendExchange('closed', 'x', 'y'), 'conflict'],
      [() => memory.messages.append('s', { role: 'bot' as never, content: 'x' }), 'invalid_input'],
      [() => memory.messages.append('s', { role: 'user', content: 7 as never }), 'invalid_input'],
      [() => memory.messages.append('s', { role: 'user', content: 'x', meta: { f: () => 1 } as never }), 'invalid_input'],
      [() => memory.messages.append('s', { role: 'user', content: 'x', meta: { big: 'y'.repeat(70_000) } }), 'limit_exceeded'],
      [() => memory.messages.append('s', { role: 'user', content: 'é'.repeat(600_000) }), 'limit_exceeded'],
      [() => memory.messages.append('s', null as never), 'invalid_input'],
      [() => memory.messages.append('', { role: 'user', content: 'x' }), 'invalid_input'],
      [() => memory.messages.appendExchange('s', 'ok', undefined as never), 'invalid_input'],
    ]
    for (const [call, code] of bad) await expect(call()).rejects.toMatchObject({ code })
    expect(seen).toEqual([])
    expect(await memory.messages.tail('s', 10)).toEqual([])
    expect(await memory.sessions.get('s')).toMatchObject({ lastActiveAt: Date.UTC(2026, 0, 1) })
    // content exactly at the limit is accepted
    await memory.messages.append('s', { role: 'user', content: 'a'.repeat(1024 * 1024) })
  })

  it('rejects appends to sessions of an archived project', async () => {
    const { memory } = await setup()
    await memory.projects.archive('p')
    await expect(memory.messages.append('s', { role: 'user', content: 'x' })).rejects.toMatchObject({ code: 'not_found' })
    expect(await memory.messages.tail('s', 5)).toEqual([])
    expect(await memory.sessions.get('s')).toMatchObject({ lastActiveAt: Date.UTC(2026, 0, 1) })
  })

  it('tails the last n oldest first', async () => {
    const { memory } = await setup()
    for (let i = 1; i <= 7; i++) await memory.messages.append('s', { role: 'user', content: `m${i}` })
    expect((await memory.messages.tail('s', 3)).map((m) => m.content)).toEqual(['m5', 'm6', 'm7'])
    expect((await memory.messages.tail('s', 50)).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(await memory.messages.tail('s', 0)).toEqual([])
    await memory.sessions.create('p', { id: 'empty' })
    expect(await memory.messages.tail('empty', 5)).toEqual([])
    await expect(memory.messages.tail('nope', 5)).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.messages.tail('s', -1)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.messages.tail('s', 1.5)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.messages.tail('s', 10_001)).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('pages with a cursor until the end', async () => {
    const { memory } = await setup()
    for (let i = 0; i < 5; i++) await memory.messages.appendExchange('s', `q${i}`, `a${i}`)
    const seen: Message[] = []
    let after: number | undefined
    let pages = 0
    do {
      const page = await memory.messages.page('s', after === undefined ? { limit: 4 } : { after, limit: 4 })
      seen.push(...page.items)
      after = page.next
      pages++
    } while (after !== undefined)
    expect(pages).toBe(3)
    expect(seen.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    const exact = await memory.messages.page('s', { after: 5, limit: 5 })
    expect(exact.items.map((m) => m.seq)).toEqual([6, 7, 8, 9, 10])
    expect(exact).not.toHaveProperty('next')
    expect(await memory.messages.page('s', { after: 10, limit: 5 })).toEqual({ items: [] })
    await expect(memory.messages.page('nope', { limit: 5 })).rejects.toMatchObject({ code: 'not_found' })
    await expect(memory.messages.page('s', { after: -1, limit: 5 })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.messages.page('s', { limit: 0 })).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('keeps messages and seq across reopen', async () => {
    const { memory } = await setup()
    await memory.messages.appendExchange('s', 'q', 'a')
    await memory.close()
    await expect(memory.messages.append('s', { role: 'user', content: 'x' })).rejects.toMatchObject({ code: 'closed' })
    const again = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId })
    expect((await again.messages.append('s', { role: 'user', content: 'next' })).seq).toBe(3)
    expect((await again.messages.tail('s', 5)).map((m) => m.content)).toEqual(['q', 'a', 'next'])
  })
})
