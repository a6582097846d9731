/** Messages between `langgraph-page.ts` and `langgraph.worker.ts`. */
export type GraphRequest =
  | { id: number; op: 'start'; userId: string; threadId: string; request: string }
  | { id: number; op: 'state'; userId: string; threadId: string }
  | { id: number; op: 'resume'; userId: string; threadId: string; approved: boolean }

/** What the graph looks like from the page: its values, what runs next, the pending question. */
export interface GraphView {
  values: { request?: string; approved?: boolean; log?: string[] }
  next: string[]
  question?: unknown
}

/** The worker's answer to a request. */
export type GraphResponse = { id: number; ok: true; view: GraphView } | { id: number; ok: false; error: string }

/** What the page puts on `window` for the test. */
export interface GraphHarness {
  call(op: 'start', args: { userId: string; threadId: string; request: string }): Promise<GraphView>
  call(op: 'state', args: { userId: string; threadId: string }): Promise<GraphView>
  call(op: 'resume', args: { userId: string; threadId: string; approved: boolean }): Promise<GraphView>
}

declare global {
  interface Window {
    graph: GraphHarness
  }
}
