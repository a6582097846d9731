import { describe, expect, it } from 'vitest'
import { createMemory, limitationsModule, type Change } from '@engram/core'
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'

async function setup() {
  const clock = testClock(Date.UTC(2026, 2, 1))
  const memory = await openTestMemory({ now: clock.now })
  return { clock, memory }
}

describe('limitations', () => {
  it('stores, deduplicates by title without case, and says whether it was new', async () => {
    const { clock, memory } = await setup()
    const first = await memory.limitations.store({ title: ' Cannot read PDFs ', description: 'No PDF parser', plan: 'Add a PDF tool' })
    expect(first).toEqual({
      isNew: true,
      limitation: {
        title: 'Cannot read PDFs',
        description: 'No PDF parser',
        plan: 'Add a PDF tool',
        status: 'open',
        createdAt: clock.now(),
        updatedAt: clock.now(),
      },
    })
    clock.advance(1000)
    const again = await memory.limitations.store({ title: 'CANNOT  read pdfs', plan: 'Use pdf.js' })
    expect(again.isNew).toBe(false)
    // the first title and description stay; the plan given replaces the old one
    expect(again.limitation).toMatchObject({
      title: 'Cannot read PDFs',
      description: 'No PDF parser',
      plan: 'Use pdf.js',
      createdAt: clock.now() - 1000,
      updatedAt: clock.now(),
    })
    await memory.limitations.store({ title: 'No calendar access' })
    expect((await memory.limitations.open()).map((l) => l.title)).toEqual(['Cannot read PDFs', 'No calendar access'])
  })

  it('resolves by title; a resolved one is left out of open() and opened again by store', async () => {
    const { memory } = await setup()
    await memory.limitations.store({ title: 'Cannot send email' })
    expect(await memory.limitations.resolve('cannot SEND email')).toBe(true)
    expect(await memory.limitations.resolve('cannot send email')).toBe(false)
    expect(await memory.limitations.resolve('never stored')).toBe(false)
    expect(await memory.limitations.open()).toEqual([])
    const back = await memory.limitations.store({ title: 'Cannot send email' })
    expect(back.isNew).toBe(false)
    expect(back.limitation.status).toBe('open')
    expect(back.limitation).not.toHaveProperty('resolvedAt')
  })

  it('refuses bad input and writes nothing', async () => {
    const { memory } = await setup()
    const seen: Change[] = []
    await memory.changes.subscribe({ kinds: ['limitations'] }, (batch) => void seen.push(...batch))
    for (const [bad, code] of [
      [{ title: '' }, 'invalid_input'],
      [{ title: '  ' }, 'invalid_input'],
      [{ title: 3 }, 'invalid_input'],
      [{ title: 'x', plan: 5 }, 'invalid_input'],
      [{ title: 'x', pln: 'typo' }, 'invalid_input'],
      [null, 'invalid_input'],
      [{ title: 'x'.repeat(201) }, 'limit_exceeded'],
      [{ title: 'x', description: 'd'.repeat(10_001) }, 'limit_exceeded'],
      [{ title: 'x', plan: 'p'.repeat(10_001) }, 'limit_exceeded'],
    ] as const)
      await expect(memory.limitations.store(bad as never)).rejects.toMatchObject({ code })
    await expect(memory.limitations.resolve('')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(memory.limitations.resolve(7 as never)).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await memory.limitations.open()).toEqual([])
    await memory.limitations.store({ title: 'marker' })
    expect(seen).toEqual([{ kind: 'limitations', op: 'put', id: 'marker', projectId: '', origin: 'local' }])
  })

  it('caps open limitations at 1,000', async () => {
    const { memory } = await setup()
    const dump = await memory.export()
    dump.tables.limitations = Array.from({ length: 1000 }, (_, i) => ({ key: `l${i}`, title: `L${i}`, status: 'open', createdAt: i, updatedAt: i }))
    await memory.import(dump, { mode: 'merge' })
    await expect(memory.limitations.store({ title: 'one more' })).rejects.toMatchObject({ code: 'limit_exceeded' })
    // updating one already open is fine
    expect((await memory.limitations.store({ title: 'l5', plan: 'p' })).isNew).toBe(false)
    await memory.limitations.resolve('l0')
    expect((await memory.limitations.store({ title: 'one more' })).isNew).toBe(true)
  })

  it('travels in whole-store dumps with its key rebuilt from the title', async () => {
    const { memory } = await setup()
    await memory.limitations.store({ title: 'Cannot read PDFs', plan: 'Add a tool' })
    const dump = await memory.export()
    const other = await openTestMemory()
    const rows = dump.tables.limitations as Record<string, unknown>[]
    rows[0]!.key = 'tampered'
    await other.import(dump, { mode: 'merge' })
    expect(await other.limitations.resolve('cannot read pdfs')).toBe(true)
    expect((await other.export()).tables.limitations).toHaveLength(1)
    await expect(
      other.import({ ...dump, tables: { limitations: [{ key: 'k', title: 'T', status: 'maybe', createdAt: 1, updatedAt: 1 }] } }, { mode: 'merge' }),
    ).rejects.toMatchObject({ code: 'invalid_input' })
    expect((await memory.export('user')).tables.limitations).toEqual([])
  })

  it('is a context section, inside the budget, and can be left out', async () => {
    const { memory } = await setup()
    await memory.projects.create({ id: 'p', name: 'P' })
    await memory.limitations.store({ title: 'Cannot read PDFs', plan: 'Add a PDF tool' })
    const built = await memory.context.build('p', { budget: 500 })
    expect(built.sections.map((s) => s.name)).toEqual(['limitations'])
    expect(built.text).toBe('<limitations>\n- Cannot read PDFs (plan: Add a PDF tool)\n</limitations>')
    expect((await memory.context.build('p', { budget: 500, sections: ['facts'] })).sections).toEqual([])
    const tiny = await memory.context.build('p', { budget: 5 })
    expect(tiny.tokens).toBeLessThanOrEqual(5)
    expect(tiny.omitted).toEqual([{ name: 'limitations', items: 1, reason: 'over budget' }])
  })

  it('is a module of its own', async () => {
    const memory = await createMemory({ appId: 'a', userId: 'lim-module', indexedDB: new IDBFactory(), IDBKeyRange, modules: [limitationsModule()] })
    expect((await memory.limitations.store({ title: 'x' })).isNew).toBe(true)
    expect('facts' in memory).toBe(false)
    await memory.close()
    await expect(memory.limitations.open()).rejects.toMatchObject({ code: 'closed' })
  })
})
