import { aiExtractor } from '@engram/ai-sdk'
import { connectMemory, type RemoteMemory } from '@engram/worker'
import { type ScriptedCall, scriptedGenerate } from '../../support/scripted-memory-model.js'

/** What the extraction test page offers the test. */
export interface ExtractionHarness {
  /** Connects to a worker host with `aiExtractor` on a scripted model in this page; `stuck`: the model never answers. */
  open(userId: string, options?: { stuck?: boolean }): Promise<void>
  /** Runs turns `[prompt, reply]` in session `sessionId` of project `p` (creating both when missing). */
  turns(sessionId: string, turns: [string, string][]): Promise<(number | undefined)[]>
  memory(): RemoteMemory
  /** The model calls this page made: where the model runs. */
  calls(): ScriptedCall[]
  /**
   * Benchmark: the same turns through two workers, one store with `aiExtractor` on an instant
   * model, one without an extractor, alternating; `turns.end` times (ms) of each, then how long
   * the extractor's queue took to drain what was left.
   */
  bench(userId: string, turns: [string, string][]): Promise<{ on: number[]; off: number[]; drainMs: number; calls: number }>
}

declare global {
  interface Window {
    extraction: ExtractionHarness
  }
}

/** Scripted per prompt: cities become the `home city` fact; the observer and reflector answer one note each. */
function answer(call: ScriptedCall): unknown {
  if (call.system.startsWith('You compress')) return { observations: [{ text: 'The user talked about moving house.', priority: 'high' }] }
  if (call.system.startsWith('You condense')) return { observations: [{ text: 'The user moved from Lisbon to Porto.', priority: 'high' }] }
  const exchange = call.prompt.slice(call.prompt.indexOf('<exchange>'))
  const city = /(?:live in|moved to) (\w+)/.exec(exchange)?.[1]
  return { operations: city ? [{ type: 'add_fact', key: city === 'Lisbon' ? 'home city' : 'Home City', value: city, reason: 'the user said so' }] : [] }
}

let memory: RemoteMemory | undefined
let calls: ScriptedCall[] = []

/** A model call that is noted and never answers. */
function stuck(): Promise<never> {
  calls.push({ system: '', prompt: 'stuck' })
  return new Promise(() => {})
}

window.extraction = {
  async open(userId, options = {}) {
    const scripted = scriptedGenerate(answer)
    calls = scripted.calls
    const model = {
      specificationVersion: 'v3' as const,
      provider: 'e2e',
      modelId: 'scripted',
      supportedUrls: {},
      // A stuck model notes the call and never answers (the tab goes away with the call in flight).
      doGenerate: (options.stuck ? stuck : scripted.doGenerate) as never,
      doStream: () => Promise.reject(new Error('not streamed')),
    }
    const worker = new Worker(new URL('./host.worker.ts', import.meta.url), { type: 'module' })
    memory = await connectMemory(worker, {
      appId: 'e2e-extraction',
      userId,
      extractor: aiExtractor({ model, observeTokens: 20, reflectTokens: 8, batchTokens: 1 }),
    })
  },
  async turns(sessionId, turns) {
    const m = window.extraction.memory()
    if ((await m.projects.get('p')) === undefined) await m.projects.create({ name: 'P', id: 'p' })
    if ((await m.sessions.get(sessionId)) === undefined) await m.sessions.create('p', { id: sessionId })
    const ids: (number | undefined)[] = []
    for (const [i, [prompt, reply]] of turns.entries()) {
      const turnId = `${Date.now().toString(36)}-${i}`
      await m.turns.begin('p', { sessionId, turnId, prompt, budget: 1_000 })
      ids.push((await m.turns.end({ sessionId, turnId, reply })).jobId)
    }
    return ids
  },
  memory() {
    if (!memory) throw new Error('call extraction.open() first')
    return memory
  },
  calls: () => calls,
  async bench(userId, turns) {
    const scripted = scriptedGenerate(answer)
    const model = {
      specificationVersion: 'v3' as const,
      provider: 'bench',
      modelId: 'instant',
      supportedUrls: {},
      doGenerate: scripted.doGenerate as never,
      doStream: () => Promise.reject(new Error('not streamed')),
    }
    const worker = () => new Worker(new URL('./host.worker.ts', import.meta.url), { type: 'module' })
    const on = await connectMemory(worker(), { appId: 'e2e-extraction-bench', userId: `${userId}-on`, extractor: aiExtractor({ model }) })
    const off = await connectMemory(worker(), { appId: 'e2e-extraction-bench', userId: `${userId}-off` })
    const times = { on: [] as number[], off: [] as number[] }
    for (const m of [on, off]) {
      await m.projects.create({ name: 'P', id: 'p' })
      await m.sessions.create('p', { id: 's' })
    }
    for (const [i, [prompt, reply]] of turns.entries()) {
      const sides = [
        [on, times.on],
        [off, times.off],
      ] as const
      for (const [m, into] of i % 2 === 0 ? sides : [...sides].reverse()) {
        await m.turns.begin('p', { sessionId: 's', turnId: `t${i}`, prompt, budget: 2_000 })
        const t0 = performance.now()
        await m.turns.end({ sessionId: 's', turnId: `t${i}`, reply })
        into.push(performance.now() - t0)
      }
    }
    const t0 = performance.now()
    await on.extraction.flush()
    const drainMs = performance.now() - t0
    await on.close()
    await off.close()
    return { ...times, drainMs, calls: scripted.calls.length }
  },
}
document.title = 'ready'
