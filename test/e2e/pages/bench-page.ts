import { openMemory } from '@engram/core'
import { connectMemory } from '@engram/worker'

/** Raw samples (ms) of every measurement, for the Node side to summarize. */
export interface BenchSamples {
  crossOriginIsolated: boolean
  factsGet: number[]
  hostNoop: number[]
  echo: number[]
  dexieGet: number[]
  dexieTxGet: number[]
  rawGetEcho: number[]
  engramGetInWorker: number[]
  appendWorker: number[]
  appendPage: number[]
}

function request(worker: Worker, message: Record<string, unknown>, answer: string): Promise<MessageEvent> {
  return new Promise((resolve) => {
    const on = (e: MessageEvent): void => {
      if ((e.data as { bench?: string })?.bench !== answer) return
      worker.removeEventListener('message', on)
      resolve(e)
    }
    worker.addEventListener('message', on)
    worker.postMessage(message)
  })
}

async function time(n: number, fn: () => Promise<unknown>, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await fn()
    into.push(performance.now() - t0)
  }
}

async function run(calls: number, appends: number): Promise<BenchSamples> {
  const userId = `b${Date.now().toString(36)}`
  const worker = new Worker(new URL('./bench.worker.ts', import.meta.url), { type: 'module' })
  const memory = await connectMemory(worker, { appId: 'bench', userId })
  await memory.facts.set('user', 'editor', { name: 'vim', since: 2001, plugins: ['fzf', 'lsp'] })
  const out: BenchSamples = {
    crossOriginIsolated,
    factsGet: [],
    hostNoop: [],
    echo: [],
    dexieGet: [],
    dexieTxGet: [],
    rawGetEcho: [],
    engramGetInWorker: [],
    appendWorker: [],
    appendPage: [],
  }
  const echo = () => request(worker, { bench: 'echo', i: 1, args: ['user', 'editor'] }, 'echo')
  // Warm up every path, then interleave rounds so drift hits all of them alike.
  await time(300, () => memory.facts.get('user', 'editor'), [])
  await time(300, echo, [])
  await time(300, () => memory.sync.isLeader(), [])
  const rounds = 5
  for (let r = 0; r < rounds; r++) {
    await time(calls / rounds, () => memory.facts.get('user', 'editor'), out.factsGet)
    await time(calls / rounds, echo, out.echo)
    await time(calls / rounds, () => memory.sync.isLeader(), out.hostNoop)
    for (const [mode, into] of [
      ['get', out.dexieGet],
      ['tx', out.dexieTxGet],
      ['engram', out.engramGetInWorker],
    ] as const) {
      const answer = await request(
        worker,
        { bench: 'dexie-get', mode, dbName: `engram:bench:${userId}`, key: ['user', 'editor'], n: calls / rounds },
        'dexie-get',
      )
      into.push(...(answer.data as { samples: number[] }).samples)
    }
    await time(calls / rounds, () => request(worker, { bench: 'get-echo', key: ['user', 'editor'] }, 'get-echo'), out.rawGetEcho)
  }

  const page = await openMemory({ appId: 'bench-page', userId })
  const [ws, ps] = [await memory.sessions.create('user'), await page.sessions.create('user')]
  const text = (i: number) => `message ${i}: the user asked about the deploy runbook and the assistant answered with the steps`
  await time(20, () => memory.messages.appendExchange(ws.id, text(0), text(1)), [])
  await time(20, () => page.messages.appendExchange(ps.id, text(0), text(1)), [])
  for (let r = 0; r < rounds; r++) {
    await time(appends / rounds, () => memory.messages.appendExchange(ws.id, text(r), text(r + 1)), out.appendWorker)
    await time(appends / rounds, () => page.messages.appendExchange(ps.id, text(r), text(r + 1)), out.appendPage)
  }
  page.close()
  await memory.close()
  return out
}

;(window as unknown as { bench: { run: typeof run } }).bench = { run }
document.title = 'ready'
