/// <reference lib="webworker" />
import { type Memory, openMemory } from '@engram/core'
import { EngramSaver } from '@engram/langgraph'
import { Annotation, Command, END, interrupt, START, StateGraph } from '@langchain/langgraph/web'
import type { GraphRequest, GraphResponse, GraphView } from './langgraph-protocol.js'
import { installSyncAsyncContext } from './sync-async-context.js'

installSyncAsyncContext()

const State = Annotation.Root({
  request: Annotation<string>(),
  approved: Annotation<boolean>(),
  log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
})

/** Plan → ask a human to approve (interrupt) → act. State lives in IndexedDB through EngramSaver. */
function approvalGraph(memory: Memory) {
  return new StateGraph(State)
    .addNode('plan', (s) => ({ log: [`planned: ${s.request}`] }))
    .addNode('approve', () => ({ approved: interrupt<string, boolean>('Approve the plan?'), log: ['asked'] }))
    .addNode('act', (s) => ({ log: [s.approved ? 'acted' : 'cancelled'] }))
    .addEdge(START, 'plan')
    .addEdge('plan', 'approve')
    .addEdge('approve', 'act')
    .addEdge('act', END)
    .compile({ checkpointer: new EngramSaver(memory) })
}

const memories = new Map<string, Promise<Memory>>()
const memoryOf = (userId: string) => {
  let memory = memories.get(userId)
  if (!memory) {
    memory = openMemory({ appId: 'e2e-langgraph', userId })
    memories.set(userId, memory)
  }
  return memory
}

async function handle(request: GraphRequest): Promise<GraphView> {
  const graph = approvalGraph(await memoryOf(request.userId))
  const config = { configurable: { thread_id: request.threadId } }
  if (request.op === 'start') await graph.invoke({ request: request.request }, config)
  if (request.op === 'resume') await graph.invoke(new Command({ resume: request.approved }), config)
  const state = await graph.getState(config)
  const question = state.tasks.flatMap((t) => t.interrupts.map((i) => i.value))[0]
  return { values: state.values as GraphView['values'], next: [...state.next], ...(question === undefined ? {} : { question }) }
}

self.addEventListener('message', (event: MessageEvent<GraphRequest>) => {
  const { id } = event.data
  handle(event.data).then(
    (view) => self.postMessage({ id, ok: true, view } satisfies GraphResponse),
    (error: unknown) =>
      self.postMessage({ id, ok: false, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) } satisfies GraphResponse),
  )
})
