import { describe, expect, it } from 'vitest'
import { MemoryError, type Embedder, type Extractor, type MemoryStatus, type Summarizer } from '@engram/core'
import { openTestMemory, testClock } from '../../../../test/support/memory.js'
import { statusWhere } from '../../../../test/support/status.js'

/** A promise with its resolve function, to wait for a call the store makes in the background. */
function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

const vector = () => new Float32Array([1, 0, 0])

describe('memory.status', () => {
  it('starts with every present component ok, absent ones off, and no problems', async () => {
    const withAll = await openTestMemory({
      embedder: { dimensions: 3, embed: async (texts) => texts.map(vector) },
      summarizer: { summarize: async () => 'short' },
      extractor: async () => [],
    })
    expect(await withAll.status.get()).toEqual({
      embedder: { state: 'ok' },
      summarizer: { state: 'ok' },
      extractor: { state: 'ok' },
      sync: { state: 'off', projects: {} },
      problems: [],
      warnings: [],
    })
    await withAll.close()
    const bare = await openTestMemory()
    expect(await bare.status.get()).toMatchObject({ embedder: { state: 'off' }, summarizer: { state: 'off' }, extractor: { state: 'off' } })
    await bare.close()
    await expect(bare.status.get()).rejects.toMatchObject({ code: 'closed' })
    await expect(bare.status.subscribe(() => {})).rejects.toMatchObject({ code: 'closed' })
  })

  it('shows a failing background embedder, then its recovery on the next successful batch', async () => {
    let failures = 1
    const embedder: Embedder = {
      dimensions: 3,
      async embed(texts) {
        if (failures-- > 0) throw new Error('embedding service down')
        return texts.map(vector)
      },
    }
    const memory = await openTestMemory({ embedder })
    // The write itself never fails: embedding runs after it, off the write path.
    const passage = await memory.archive.create('user', 'the passport is in the top drawer')
    const failing = await statusWhere(memory, (s) => s.embedder.state === 'failing')
    const problem = { source: 'embedder', code: 'internal', message: 'embedding service down', at: expect.any(Number) }
    expect(failing.embedder).toEqual({ state: 'failing', lastError: problem })
    expect(failing.problems).toEqual([problem])
    // The queue retries the batch by itself; the success turns the embedder ok again, the problem stays listed.
    const recovered = await statusWhere(memory, (s) => s.embedder.state === 'ok')
    expect(recovered.embedder).toEqual({ state: 'ok', lastError: problem })
    expect(recovered.problems).toEqual([problem])
    expect((await memory.search('user', 'drawer', { mode: 'vector' })).map((h) => h.id)).toContain(passage.id)
    await memory.close()
  })

  it('shows a failing query embedding: hybrid falls back to text, vector fails; a later query recovers', async () => {
    const queued = deferred()
    const embedder: Embedder = {
      dimensions: 3,
      async embed(texts) {
        if (texts.includes('where is my passport')) throw new TypeError('quota of the embedding API used up')
        if (texts.some((t) => t.includes('drawer'))) queued.resolve()
        return texts.map(vector)
      },
    }
    const memory = await openTestMemory({ embedder })
    await memory.archive.create('user', 'the passport is in the top drawer')
    await queued.promise // the background batch succeeded before the failing queries below
    expect((await memory.status.get()).embedder.state).toBe('ok')

    // A question, not a short keyword query: hybrid embeds it (one or two keywords skip the vector part).
    const hits = await memory.search('user', 'where is my passport', { mode: 'hybrid' })
    expect(hits.map((h) => h.kind)).toEqual(['passage'])
    const afterHybrid = await memory.status.get()
    expect(afterHybrid.embedder).toEqual({
      state: 'failing',
      lastError: expect.objectContaining({ source: 'embedder', code: 'internal', message: 'quota of the embedding API used up' }),
    })
    expect(afterHybrid.problems).toHaveLength(1)

    const error = await memory.search('user', 'where is my passport', { mode: 'vector' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MemoryError)
    expect(error).toMatchObject({ code: 'internal' })
    expect((await memory.status.get()).problems).toHaveLength(2)

    await memory.search('user', 'where is the drawer', { mode: 'hybrid' })
    expect((await memory.status.get()).embedder.state).toBe('ok')
    await memory.close()
  })

  describe('a failing summarizer', () => {
    async function seeded(summarizer: Summarizer) {
      const clock = testClock()
      const memory = await openTestMemory({ now: clock.now, summarizer })
      await memory.projects.create({ name: 'P', id: 'p1' })
      const session = await memory.sessions.create('p1')
      for (let i = 0; i < 30; i++) {
        clock.advance(1000)
        await memory.messages.appendExchange(session.id, `question number ${i} about hotels near the river`, `answer number ${i}: several hotels`)
      }
      return { memory, sessionId: session.id }
    }

    it.each([
      [
        'throws',
        async (): Promise<string> => {
          throw new Error('summarizer offline')
        },
        'summarizer offline',
      ],
      ['returns no text', async () => '   ', 'summarize() returned no text'],
    ])('that %s drops the overflow as summarizer_failed and shows in status, until it works again', async (_name, failure, message) => {
      let summarize: Summarizer['summarize'] = failure
      const { memory, sessionId } = await seeded({ summarize: (texts, max) => summarize(texts, max) })
      const failed = await memory.context.build('p1', { sessionId, budget: 400, sections: ['recent'] })
      expect(failed.tokens).toBeLessThanOrEqual(400)
      const recent = failed.sections.find((s) => s.name === 'recent')!
      expect(failed.omitted).toEqual([{ name: 'recent', items: 60 - recent.items, reason: 'summarizer_failed' }])
      const status = await memory.status.get()
      const problem = { source: 'summarizer', code: 'internal', message, at: expect.any(Number), projectId: 'p1' }
      expect(status.summarizer).toEqual({ state: 'failing', lastError: problem })
      expect(status.problems).toEqual([problem])

      summarize = async (texts) => `earlier: ${texts.length} turns about hotels`
      const condensed = await memory.context.build('p1', { sessionId, budget: 400, sections: ['recent'] })
      expect(condensed.omitted.map((o) => o.reason)).toEqual(['summarized'])
      expect((await memory.status.get()).summarizer).toEqual({ state: 'ok', lastError: problem })
      await memory.close()
    })

    it('without a summarizer the overflow is only over budget, and status says off', async () => {
      const clock = testClock()
      const memory = await openTestMemory({ now: clock.now })
      const session = await memory.sessions.create('user')
      for (let i = 0; i < 20; i++) await memory.messages.appendExchange(session.id, `question ${i} about the long trip ahead`, `answer ${i} with the details`)
      const c = await memory.context.build('user', { sessionId: session.id, budget: 100, sections: ['recent'] })
      expect(c.omitted.map((o) => o.reason)).toEqual(['over budget'])
      expect(await memory.status.get()).toMatchObject({ summarizer: { state: 'off' }, problems: [] })
      await memory.close()
    })
  })

  it('shows a failing extractor with its project, and its recovery on the next extracted turn', async () => {
    const extractor: Extractor = async (exchange) => {
      if (exchange.prompt.includes('break')) throw new RangeError('the model returned garbage')
      return [{ op: 'fact.set', key: 'pet', value: 'cat' }]
    }
    const memory = await openTestMemory({ extractor })
    await memory.projects.create({ name: 'P', id: 'p' })
    await memory.turns.begin('p', { sessionId: 's', turnId: 't1', prompt: 'please break', budget: 100 })
    const ended = await memory.turns.end({ sessionId: 's', turnId: 't1', reply: 'ok' })
    expect(ended).toEqual({ written: 0, extractionError: { code: 'internal', message: expect.stringContaining('the model returned garbage') } })
    const status = await memory.status.get()
    expect(status.extractor).toEqual({
      state: 'failing',
      lastError: expect.objectContaining({ source: 'extractor', projectId: 'p', message: expect.stringContaining('garbage') }),
    })
    expect(status.problems.map((p) => p.source)).toEqual(['extractor'])

    await memory.turns.begin('p', { sessionId: 's', turnId: 't2', prompt: 'I have a cat', budget: 100 })
    expect(await memory.turns.end({ sessionId: 's', turnId: 't2', reply: 'noted' })).toEqual({ written: 1 })
    expect((await memory.status.get()).extractor.state).toBe('ok')
    await memory.close()
  })

  it('status.subscribe delivers a snapshot on every change and nothing after its unsubscribe', async () => {
    let fail = true
    const summarizer: Summarizer = {
      summarize: async () => {
        if (fail) throw new Error('down')
        return 'fine'
      },
    }
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now, summarizer })
    const session = await memory.sessions.create('user')
    for (let i = 0; i < 20; i++) await memory.messages.appendExchange(session.id, `question ${i} about the long trip ahead`, `answer ${i} with the details`)
    const build = () => memory.context.build('user', { sessionId: session.id, budget: 150, sections: ['recent'] })

    const first: MemoryStatus[] = []
    const second: MemoryStatus[] = []
    const offFirst = await memory.status.subscribe((s) => first.push(s))
    const offSecond = await memory.status.subscribe((s) => second.push(s))
    await build()
    expect(first.map((s) => s.summarizer.state)).toEqual(['failing'])
    expect(second).toEqual(first)
    // A snapshot is the listener's own copy.
    first[0]!.problems.length = 0
    expect((await memory.status.get()).problems).toHaveLength(1)

    await offFirst()
    await offFirst() // idempotent
    fail = false
    await build()
    // The later change reached the listener still subscribed: the unsubscribed one was not called.
    expect(second.map((s) => s.summarizer.state)).toEqual(['failing', 'ok'])
    expect(first).toHaveLength(1)
    // No change, no snapshot.
    await build()
    expect(second).toHaveLength(2)
    await offSecond()
    await expect(memory.status.subscribe('listener' as never)).rejects.toMatchObject({ code: 'invalid_input' })
    await memory.close()
  })

  it('keeps the 20 most recent problems, oldest first', async () => {
    const summarizer: Summarizer = {
      summarize: async (texts) => {
        throw new Error(`failure ${texts.length}`)
      },
    }
    const clock = testClock()
    const memory = await openTestMemory({ now: clock.now, summarizer })
    const session = await memory.sessions.create('user')
    for (let i = 0; i < 20; i++) await memory.messages.appendExchange(session.id, `question ${i} about the long trip ahead`, `answer ${i} with the details`)
    for (let i = 0; i < 25; i++) {
      clock.advance(1)
      await memory.context.build('user', { sessionId: session.id, budget: 150, sections: ['recent'] })
    }
    const { problems, summarizer: state } = await memory.status.get()
    expect(problems).toHaveLength(20)
    expect(problems.map((p) => p.at)).toEqual(Array.from({ length: 20 }, (_, i) => clock.now() - 19 + i))
    expect(state.lastError).toEqual(problems.at(-1))
    await memory.close()
  })

  it('a throwing status listener does not stop the others', async () => {
    const summarizer: Summarizer = {
      summarize: async () => {
        throw new Error('down')
      },
    }
    const memory = await openTestMemory({ summarizer })
    const session = await memory.sessions.create('user')
    for (let i = 0; i < 20; i++) await memory.messages.appendExchange(session.id, `question ${i} about the long trip ahead`, `answer ${i} with the details`)
    const errors = console.error
    const logged: unknown[] = []
    console.error = (...args: unknown[]) => void logged.push(args)
    try {
      const seen: string[] = []
      await memory.status.subscribe(() => {
        throw new Error('listener bug')
      })
      await memory.status.subscribe((s) => seen.push(s.summarizer.state))
      await memory.context.build('user', { sessionId: session.id, budget: 150, sections: ['recent'] })
      expect(seen).toEqual(['failing'])
      expect(logged).toHaveLength(1)
    } finally {
      console.error = errors
    }
    await memory.close()
  })
})
