import { describe, expect, it } from 'vitest'
import type { Change } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

describe('runs', () => {
  it('upserts checkpoints on (runId, phase) and lists them in creation order', async () => {
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now })
    const t0 = clock.now()
    await memory.runs.setCheckpoint('r1', 'plan', { status: 'running' })
    await memory.runs.setCheckpoint('r1', 'act', { status: 'running' })
    await memory.runs.setCheckpoint('r1', 'verify', { status: 'pending' })
    clock.advance(50)
    const done = await memory.runs.setCheckpoint('r1', 'plan', { status: 'done', output: { steps: 3 } })
    expect(done).toEqual({ runId: 'r1', phase: 'plan', status: 'done', output: { steps: 3 }, attempt: 1, createdAt: t0, updatedAt: t0 + 50 })
    const again = await memory.runs.setCheckpoint('r1', 'plan', { status: 'done', output: { steps: 3 } })
    expect(again).toEqual(done)
    const failed = await memory.runs.setCheckpoint('r1', 'act', { status: 'failed', error: 'timeout', attempt: 2 })
    expect(failed).toMatchObject({ attempt: 2, error: 'timeout' })
    // attempt is kept when omitted; error and output are replaced by what is given
    expect(await memory.runs.setCheckpoint('r1', 'act', { status: 'running' })).not.toHaveProperty('error')
    expect((await memory.runs.checkpoints('r1')).map((c) => [c.phase, c.status, c.attempt])).toEqual([
      ['plan', 'done', 1],
      ['act', 'running', 2],
      ['verify', 'pending', 1],
    ])
    expect(await memory.runs.checkpoints('other')).toEqual([])
  })

  it('clears checkpoints of one run only', async () => {
    const memory = await openTestMemory()
    await memory.runs.setCheckpoint('r1', 'a', { status: 'ok' })
    await memory.runs.setCheckpoint('r1', 'b', { status: 'ok' })
    await memory.runs.setCheckpoint('r2', 'a', { status: 'ok' })
    await memory.runs.appendToolEvent('r1', { tool: 'search', status: 'ok' })
    expect(await memory.runs.deleteCheckpoints('r1')).toBe(2)
    expect(await memory.runs.deleteCheckpoints('r1')).toBe(0)
    expect(await memory.runs.checkpoints('r1')).toEqual([])
    expect(await memory.runs.checkpoints('r2')).toHaveLength(1)
    expect((await memory.runs.toolEvents('r1')).items).toHaveLength(1)
    // a new phase after clear starts the order again
    await memory.runs.setCheckpoint('r1', 'z', { status: 'ok' })
    await memory.runs.setCheckpoint('r1', 'y', { status: 'ok' })
    expect((await memory.runs.checkpoints('r1')).map((c) => c.phase)).toEqual(['z', 'y'])
  })

  it('keeps checkpoints across a reopen', async () => {
    const memory = await openTestMemory()
    await memory.runs.setCheckpoint('r', 'fetch', { status: 'done', output: ['a'] })
    await memory.runs.setCheckpoint('r', 'parse', { status: 'running', attempt: 3 })
    await memory.runs.setStatus('r', { status: 'running', summary: 'halfway' })
    await memory.close()
    const reopened = await openTestMemory({ indexedDB: memory.indexedDB, userId: memory.userId })
    expect((await reopened.runs.checkpoints('r')).map((c) => [c.phase, c.status, c.attempt, c.output])).toEqual([
      ['fetch', 'done', 1, ['a']],
      ['parse', 'running', 3, undefined],
    ])
    expect(await reopened.runs.get('r')).toMatchObject({ status: 'running', summary: 'halfway' })
  })

  it('records tool events in order, also in parallel', async () => {
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now })
    const e = await memory.runs.appendToolEvent('r', { tool: 'web.search', input: { q: 'x' }, output: [1], status: 'ok', durationMs: 12.5 })
    expect(e).toEqual({ runId: 'r', seq: 1, tool: 'web.search', input: { q: 'x' }, output: [1], status: 'ok', durationMs: 12.5, at: clock.now() })
    await Promise.all(Array.from({ length: 20 }, (_, i) => memory.runs.appendToolEvent('r', { tool: `t${i}`, status: 'ok' })))
    const events = await memory.runs.toolEvents('r')
    expect(events.next).toBeUndefined()
    expect(events.items.map((x) => x.seq)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1))
  })

  it('sets status and keeps the summary unless replaced', async () => {
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now })
    expect(await memory.runs.get('r')).toBeUndefined()
    await memory.runs.setStatus('r', { status: 'running', summary: 'started' })
    clock.advance(5)
    expect(await memory.runs.setStatus('r', { status: 'done' })).toEqual({ runId: 'r', status: 'done', summary: 'started', updatedAt: clock.now() })
    expect(await memory.runs.setStatus('r', { status: 'done', summary: 'all good' })).toMatchObject({ summary: 'all good' })
  })

  it('rejects bad input without writing and emits runs changes', async () => {
    const memory = await openTestMemory()
    const seen: Change[] = []
    await memory.changes.subscribe({}, (b) => seen.push(...b))
    await expect(memory.runs.setCheckpoint('', 'p', { status: 'x' })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.runs.setCheckpoint('r', 'p', { status: '' })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.runs.setCheckpoint('r', 'p', { status: 'x', attempt: -1 })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.runs.setCheckpoint('r', 'p', { status: 'x', output: 'y'.repeat(1024 * 1024) })).rejects.toMatchObject({ code: 'limit_exceeded' })
    await expect(memory.runs.appendToolEvent('r', { tool: 't', status: 'ok', durationMs: -5 })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.runs.appendToolEvent('r', { tool: '', status: 'ok' })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.runs.setStatus('r', {} as never)).rejects.toMatchObject({ code: 'invalid_input' })
    expect(seen).toEqual([])
    await memory.runs.setCheckpoint('r', 'p', { status: 'x' })
    await memory.runs.deleteCheckpoints('r')
    expect(seen).toEqual([
      { kind: 'runs', op: 'put', id: 'r', projectId: '', origin: 'local' },
      { kind: 'runs', op: 'delete', id: 'r', projectId: '', origin: 'local' },
    ])
  })
})
