import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { openTestMemory } from '../../../test/support/memory.js'
import { textResult, toolCallResult } from '../../../test/support/model-results.js'
import { memoryTools } from './memory-tools.js'

describe('memoryTools', () => {
  it('lets a model manage its memory in a multi-step generateText loop; a failing tool comes back as a result', async () => {
    const memory = await openTestMemory()
    const project = await memory.projects.create({ name: 'tools' })
    await memory.blocks.set(project.id, 'human', 'Name: Ada.')
    const steps = [
      toolCallResult('remember', { key: 'favourite_colour', value: 'teal', tags: ['pref'] }),
      toolCallResult('core_memory_replace', { label: 'human', old_content: 'Name: Bob.', new_content: 'Name: Ada L.' }),
      toolCallResult('core_memory_replace', { label: 'human', old_content: 'Name: Ada.', new_content: 'Name: Ada L.' }),
      toolCallResult('archival_memory_insert', { content: 'Ada visited Lisbon in May and loved the trams.' }),
      toolCallResult('archival_memory_search', { query: 'Lisbon trams' }),
      toolCallResult('recall', { key: 'favourite_colour' }),
      textResult('Done: your favourite colour is teal.'),
    ]
    const model = new MockLanguageModelV3({ doGenerate: steps })
    const result = await generateText({
      model,
      tools: memoryTools(memory, { projectId: project.id }),
      stopWhen: stepCountIs(10),
      prompt: 'Remember that my favourite colour is teal.',
    })

    expect(result.text).toBe('Done: your favourite colour is teal.')
    expect(result.steps).toHaveLength(7)
    const outputs = result.steps.flatMap((s) => s.toolResults.map((r) => [r.toolName, r.output]))
    expect(outputs[0]).toEqual(['remember', { ok: true, key: 'favourite_colour', value: 'teal', version: 1 }])
    expect(outputs[1]).toEqual(['core_memory_replace', { ok: false, error: { code: 'not_found', message: expect.stringContaining('old_content') } }])
    expect(outputs[2]).toEqual(['core_memory_replace', { ok: true, label: 'human' }])
    expect(outputs[4]?.[1]).toMatchObject({ ok: true, passages: [{ text: 'Ada visited Lisbon in May and loved the trams.' }] })
    expect(outputs[5]).toEqual(['recall', { ok: true, facts: [{ key: 'favourite_colour', value: 'teal' }] }])
    // The failed call's result reached the model in the next step's prompt.
    const third = JSON.stringify(model.doGenerateCalls[2]?.prompt)
    expect(third).toContain('not_found')
    expect((await memory.blocks.get(project.id, 'human'))?.value).toBe('Name: Ada L.')
    expect((await memory.facts.get(project.id, 'favourite_colour'))?.source).toEqual({ tool: 'remember' })
  })

  it('returns store errors as results: limits, read-only blocks, unknown projects', async () => {
    const memory = await openTestMemory()
    const project = await memory.projects.create({ name: 'limits' })
    await memory.blocks.set(project.id, 'persona', 'fixed', { readOnly: true })
    const tools = memoryTools(memory, { projectId: project.id })
    const run = <I>(t: { execute?: (input: I, options: never) => unknown }, input: I) => t.execute!(input, {} as never)
    expect(await run(tools.core_memory_append, { label: 'persona', content: 'more' })).toMatchObject({ ok: false, error: { code: 'read_only' } })
    await memory.blocks.set(project.id, 'tiny', 'ab', { limit: 3 })
    expect(await run(tools.core_memory_append, { label: 'tiny', content: 'cdef' })).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } })
    expect(await run(tools.forget, { key: 'nothing' })).toEqual({ ok: true, forgotten: false })
    const stray = memoryTools(memory, { projectId: 'no-such-project' })
    expect(await run(stray.remember, { key: 'k', value: 1 })).toMatchObject({ ok: false, error: { code: 'not_found' } })
  })

  it('refuses bad options with invalid_input', async () => {
    const memory = await openTestMemory()
    expect(() => memoryTools(memory, { projectId: '' })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(() => memoryTools(memory, { projectId: 'p', extra: 1 } as never)).toThrow(expect.objectContaining({ code: 'invalid_input' }))
    expect(() => memoryTools({} as never, { projectId: 'p' })).toThrow(expect.objectContaining({ code: 'invalid_input' }))
  })
})
