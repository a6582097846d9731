import { describe, expect, it } from 'vitest'
import type { Change } from '@engram/core'
import { openTestMemory } from '../../../../test/support/memory.js'
import { defaultPricing } from '@engram/core/pricing'
import { estimateCost, findPrice } from './pricing.js'

describe('usage', () => {
  it('sums costs without floating-point noise', async () => {
    const memory = await openTestMemory({ pricing: { tenth: { input: 0.1, output: 0 }, fifth: { input: 0.2, output: 0 } } })
    await memory.usage.append({ sessionId: 's', model: 'tenth', inputTokens: 1_000_000, outputTokens: 0 })
    await memory.usage.append({ sessionId: 's', model: 'fifth', inputTokens: 1_000_000, outputTokens: 0 })
    expect((await memory.usage.session('s')).costUsd).toBe(0.3)
    expect((await memory.usage.total()).costUsd).toBe(0.3)
  })

  it('records calls and sums them per session, project and overall with cost', async () => {
    const memory = await openTestMemory({ pricing: defaultPricing })
    await memory.usage.append({
      sessionId: 's1',
      projectId: 'p',
      model: 'claude-sonnet-4-5-20250929',
      inputTokens: 1_000_000,
      outputTokens: 100_000,
      cacheReadTokens: 1_000_000,
      cacheWriteTokens: 0,
    })
    await memory.usage.append({ sessionId: 's1', model: 'gpt-4o-mini', inputTokens: 2_000_000, outputTokens: 1_000_000 })
    await memory.usage.append({ sessionId: 's2', projectId: 'p', model: 'my-local-llama', inputTokens: 10, outputTokens: 5 })
    const s1 = await memory.usage.session('s1')
    expect(s1).toMatchObject({
      calls: 2,
      inputTokens: 3_000_000,
      outputTokens: 1_100_000,
      cacheReadTokens: 1_000_000,
      cacheWriteTokens: 0,
      totalTokens: 5_100_000,
      unpricedCalls: 0,
      unpricedModels: [],
    })
    // sonnet: 3 + 1.5 + 0.3 ; 4o-mini: 0.3 + 0.6
    expect(s1.costUsd).toBeCloseTo(3 + 1.5 + 0.3 + 0.3 + 0.6, 9)
    const p = await memory.usage.project('p')
    expect(p).toMatchObject({ calls: 2, unpricedCalls: 1, unpricedModels: ['my-local-llama'] })
    expect(p.costUsd).toBeCloseTo(4.8, 9)
    const total = await memory.usage.total()
    expect(total).toMatchObject({ calls: 3, totalTokens: 5_100_015, unpricedModels: ['my-local-llama'] })
    expect(await memory.usage.session('none')).toEqual({
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      totalTokens: 0,
      costUsd: 0,
      unpricedCalls: 0,
      unpricedModels: [],
    })
  })

  it('has no built-in prices: without a pricing table every call is unpriced', async () => {
    const memory = await openTestMemory()
    await memory.usage.append({ sessionId: 's', model: 'gpt-4o-mini', inputTokens: 1_000_000, outputTokens: 1_000_000 })
    await memory.usage.append({ sessionId: 's', model: 'claude-sonnet-4-5', inputTokens: 10, outputTokens: 5 })
    expect(await memory.usage.session('s')).toMatchObject({ calls: 2, costUsd: 0, unpricedCalls: 2, unpricedModels: ['claude-sonnet-4-5', 'gpt-4o-mini'] })
  })

  it('lets the app extend and override the default pricing table', async () => {
    const memory = await openTestMemory({ pricing: { ...defaultPricing, 'my-local-llama': { input: 1, output: 2 }, 'gpt-4o-mini*': { input: 0, output: 0 } } })
    await memory.usage.append({ sessionId: 's', model: 'my-local-llama', inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 1_000_000 })
    await memory.usage.append({ sessionId: 's', model: 'gpt-4o-mini-2024-07-18', inputTokens: 1_000_000, outputTokens: 0 })
    const s = await memory.usage.session('s')
    expect(s.costUsd).toBeCloseTo(1 + 2 + 1, 9) // cache reads fall back to the input price
    expect(s.unpricedModels).toEqual([])
    await expect(openTestMemory({ pricing: { x: { input: -1, output: 0 } } })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(openTestMemory({ pricing: { x: { input: 1 } } as never })).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('rejects bad input without writing and emits usage changes', async () => {
    const memory = await openTestMemory()
    const seen: Change[] = []
    await memory.changes.subscribe({ kinds: ['usage'] }, (b) => seen.push(...b))
    for (const bad of [
      { sessionId: '', model: 'm', inputTokens: 1, outputTokens: 1 },
      { sessionId: 's', model: '', inputTokens: 1, outputTokens: 1 },
      { sessionId: 's', model: 'm', inputTokens: -1, outputTokens: 1 },
      { sessionId: 's', model: 'm', inputTokens: 1.5, outputTokens: 1 },
      { sessionId: 's', model: 'm', inputTokens: 1 },
      { sessionId: 's', model: 'm', inputTokens: 1, outputTokens: 1, cacheReadTokens: 'x' },
    ])
      await expect(memory.usage.append(bad as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.usage.append({ sessionId: 's', model: 'm'.repeat(201), inputTokens: 1, outputTokens: 1 })).rejects.toMatchObject({
      code: 'limit_exceeded',
    })
    expect((await memory.usage.total()).calls).toBe(0)
    await memory.usage.append({ sessionId: 's', projectId: 'p', model: 'm', inputTokens: 1, outputTokens: 1 })
    await memory.usage.append({ sessionId: 's', model: 'm', inputTokens: 1, outputTokens: 1 })
    expect(seen.map((c) => [c.kind, c.op, c.projectId])).toEqual([
      ['usage', 'put', 'p'],
      ['usage', 'put', ''],
    ])
  })

  it('matches prices exactly first, then by longest prefix, case-insensitively', () => {
    expect(findPrice('gpt-4o-mini', [defaultPricing])).toEqual(defaultPricing['gpt-4o-mini*'])
    expect(findPrice('GPT-4o-2024-08-06', [defaultPricing])).toEqual(defaultPricing['gpt-4o*'])
    expect(findPrice('claude-opus-4-5-20251101', [defaultPricing])).toEqual(defaultPricing['claude-opus-4-5*'])
    expect(findPrice('claude-opus-4-1', [defaultPricing])).toEqual(defaultPricing['claude-opus-4*'])
    expect(findPrice('x', [{ x: { input: 1, output: 1 }, 'x*': { input: 2, output: 2 } }])).toEqual({ input: 1, output: 1 })
    expect(estimateCost('unknown', { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, [defaultPricing])).toBeUndefined()
  })
})
