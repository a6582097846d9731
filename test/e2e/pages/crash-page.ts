import { connectMemory } from '@engram/worker'

/** What a call in flight sees when the worker serving it ends. */
export interface CrashResult {
  code: string
  elapsedMs: number
  closed: boolean
  after: string
}

declare global {
  interface Window {
    crashTest(userId: string): Promise<CrashResult>
  }
}

window.crashTest = async (userId) => {
  const worker = new Worker(new URL('./host.worker.ts', import.meta.url), { type: 'module' })
  let summarizing!: () => void
  const summarizerCalled = new Promise<void>((resolve) => {
    summarizing = resolve
  })
  // A summarizer that never answers keeps context.build in flight until the worker ends.
  const memory = await connectMemory(worker, {
    appId: 'e2e-crash',
    userId,
    summarizer: {
      summarize: () => {
        summarizing()
        return new Promise<string>(() => {})
      },
    },
  })
  const project = await memory.projects.create({ name: 'P' })
  const session = await memory.sessions.create(project.id)
  for (let i = 0; i < 40; i++) await memory.messages.appendExchange(session.id, `question ${i} ${'x'.repeat(200)}`, `answer ${i} ${'y'.repeat(200)}`)
  const pending = memory.context.build(project.id, { sessionId: session.id, budget: 300 }).then(
    () => 'resolved',
    (e: { code?: string }) => String(e.code),
  )
  await summarizerCalled
  const started = performance.now()
  worker.terminate()
  const code = await pending
  const elapsedMs = performance.now() - started
  const after = await memory.facts.get('user', 'x').then(
    () => 'answered',
    (e: { code?: string }) => String(e.code),
  )
  return { code, elapsedMs, closed: memory.closed, after }
}
document.title = 'ready'
