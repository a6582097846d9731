import type { ConnectionStatus, SyncErrorReason, SyncProblem } from './sync-types.js'

/** The state of one document of a project as its mirror reports it. */
export interface DocState {
  status: ConnectionStatus
  reason?: SyncErrorReason | undefined
  message?: string | undefined
}

/**
 * Which state of a document decides the project's, first to last: an error (a refused
 * session document stays visible), writes the relay does not take (read-only), no
 * link, still connecting; `synced` only when every document is.
 */
const PRECEDENCE: readonly ConnectionStatus[] = ['error', 'read_only', 'offline', 'connecting', 'synced']

/**
 * One project's documents (the project document, '', and its open session
 * documents): their states and problems, and what the project shows for them.
 */
export interface ProjectStatus {
  /** Sets one document's state; returns the project's (undefined until the project document reported). */
  set(doc: string, state: DocState): DocState | undefined
  /** Forgets a document (its mirror stopped); returns the project's state, undefined when no document is left. */
  drop(doc: string): DocState | undefined
  /** Sets one document's problems; returns every document's, the project document's first. */
  setProblems(doc: string, problems: readonly SyncProblem[]): SyncProblem[]
  /** The project's state now. */
  readonly state: DocState | undefined
}

/** Creates the status keeper of one project. */
export function createProjectStatus(): ProjectStatus {
  const states = new Map<string, DocState>()
  const problems = new Map<string, readonly SyncProblem[]>()

  function combined(): DocState | undefined {
    if (!states.has('')) return undefined
    let best: DocState | undefined
    for (const state of states.values()) {
      if (best === undefined || PRECEDENCE.indexOf(state.status) < PRECEDENCE.indexOf(best.status)) best = state
    }
    return best
  }

  return {
    set(doc, state) {
      states.set(doc, state)
      return combined()
    },
    drop(doc) {
      states.delete(doc)
      problems.delete(doc)
      return combined()
    },
    setProblems(doc, list) {
      problems.set(doc, list)
      const all: SyncProblem[] = [...(problems.get('') ?? [])]
      for (const [d, l] of problems) if (d !== '') all.push(...l)
      return all
    },
    get state() {
      return combined()
    },
  }
}
