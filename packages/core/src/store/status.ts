import { MemoryError } from './errors.js'
import { reportError } from './report-error.js'

/** Removes a subscription; resolves once it is gone (also through a worker). */
export type Unsubscribe = () => Promise<void>

/** What works in the background of a store and can fail there. */
export type BackgroundSource = 'embedder' | 'summarizer' | 'extractor' | 'sync'

/** One background failure, as the app sees it. */
export interface BackgroundProblem {
  source: BackgroundSource
  /** A `MemoryError` code, or `internal` for an app function that threw something else. */
  code: string
  message: string
  /** Epoch ms. */
  at: number
  projectId?: string
}

/**
 * Sync state of one project. `read_only`: connected, but the relay takes no writes from this
 * device's token (read-only scope) and this device holds changes the relay does not have.
 */
export type SyncState = 'off' | 'connecting' | 'synced' | 'read_only' | 'offline' | 'error'

/** A condition the app should show that is not a failed background task, current only. */
export interface StatusWarning {
  /** `clock`: this device's clock is off the relay's by more than sync's bound. */
  type: 'clock'
  message: string
  /** Relay time minus this device's clock, ms (positive: this clock is slow). */
  offsetMs: number
  /** Since when it holds (epoch ms). */
  since: number
}

/** The state of one background component. `failing` means its last attempt failed (it retries where it can). */
export interface ComponentStatus {
  state: 'off' | 'ok' | 'failing'
  /** The failure that put it in `failing`; kept after recovery as history. */
  lastError?: BackgroundProblem
}

/** Everything that runs in the background of a store, in one place. */
export interface MemoryStatus {
  embedder: ComponentStatus
  summarizer: ComponentStatus
  extractor: ComponentStatus
  sync: ComponentStatus & { projects: Record<string, SyncState> }
  /** The most recent background failures (at most 20), oldest first. */
  problems: BackgroundProblem[]
  /** What the app should show now besides failures (e.g. a `clock` warning); empty when all is well. */
  warnings: StatusWarning[]
}

/** `memory.status`: background failures (embedder, summarizer, extractor, sync) readable and observable. */
export interface StatusApi {
  /** A snapshot of the store's background state. @throws MemoryError `closed`. */
  get(): Promise<MemoryStatus>
  /**
   * Calls `listener` with a new snapshot whenever a background state changes.
   * @throws MemoryError `invalid_input` when `listener` is not a function, `closed`.
   */
  subscribe(listener: (status: MemoryStatus) => void): Promise<Unsubscribe>
}

/** The store's status keeper: modules report into it, the app reads it through {@link StatusApi}. */
export interface StatusHub {
  /** Marks a component as present (state `ok`) or absent (`off`). */
  enable(source: BackgroundSource, on: boolean): void
  /** Records a failure: the component turns `failing` and the problem is listed. */
  fail(source: BackgroundSource, error: unknown, projectId?: string): void
  /** A successful attempt after failures: the component is `ok` again. */
  recover(source: BackgroundSource): void
  /** Sets one project's sync state (`off` removes it). */
  setSync(projectId: string, state: SyncState): void
  /** Shows a warning of `type` (replacing the one shown), or clears it with undefined. */
  warn(type: StatusWarning['type'], warning: Omit<StatusWarning, 'type' | 'since'> | undefined): void
  snapshot(): MemoryStatus
  readonly api: StatusApi
}

const MAX_PROBLEMS = 20
const SOURCES: readonly BackgroundSource[] = ['embedder', 'summarizer', 'extractor', 'sync']

/** Creates the status keeper of one store. */
export function createStatusHub(now: () => number, assertOpen: () => void): StatusHub {
  const components = new Map<BackgroundSource, ComponentStatus>(SOURCES.map((s) => [s, { state: 'off' }]))
  const syncProjects = new Map<string, SyncState>()
  const problems: BackgroundProblem[] = []
  const warnings = new Map<StatusWarning['type'], StatusWarning>()
  const listeners = new Set<(status: MemoryStatus) => void>()

  function snapshot(): MemoryStatus {
    const copy = (s: BackgroundSource): ComponentStatus => ({ ...components.get(s)! })
    return {
      embedder: copy('embedder'),
      summarizer: copy('summarizer'),
      extractor: copy('extractor'),
      sync: { ...copy('sync'), projects: Object.fromEntries(syncProjects) },
      problems: problems.map((p) => ({ ...p })),
      warnings: [...warnings.values()].map((w) => ({ ...w })),
    }
  }
  function changed(): void {
    if (listeners.size === 0) return
    const status = snapshot()
    for (const listener of [...listeners]) {
      try {
        listener(status)
      } catch (error) {
        reportError(error)
      }
    }
  }
  function set(source: BackgroundSource, next: ComponentStatus): void {
    const current = components.get(source)!
    if (current.state === next.state && current.lastError === next.lastError) return
    components.set(source, next)
    changed()
  }

  return {
    enable(source, on) {
      const current = components.get(source)!
      set(source, on ? { ...current, state: current.state === 'failing' ? 'failing' : 'ok' } : { ...current, state: 'off' })
    },
    fail(source, error, projectId) {
      const problem: BackgroundProblem = {
        source,
        at: now(),
        code: error instanceof MemoryError ? error.code : 'internal',
        message: error instanceof Error ? error.message : String(error),
        ...(projectId === undefined ? {} : { projectId }),
      }
      problems.push(problem)
      if (problems.length > MAX_PROBLEMS) problems.shift()
      components.set(source, { state: 'failing', lastError: problem })
      changed()
    },
    recover(source) {
      const current = components.get(source)!
      if (current.state === 'failing') set(source, { ...current, state: 'ok' })
    },
    setSync(projectId, state) {
      if ((syncProjects.get(projectId) ?? 'off') === state) return
      if (state === 'off') syncProjects.delete(projectId)
      else syncProjects.set(projectId, state)
      changed()
    },
    warn(type, warning) {
      const current = warnings.get(type)
      if (warning === undefined) {
        if (current && warnings.delete(type)) changed()
        return
      }
      if (current?.message === warning.message && current.offsetMs === warning.offsetMs) return
      warnings.set(type, { type, ...warning, since: current?.since ?? now() })
      changed()
    },
    snapshot,
    api: {
      async get() {
        assertOpen()
        return snapshot()
      },
      async subscribe(listener) {
        assertOpen()
        if (typeof listener !== 'function') throw new MemoryError('invalid_input', 'status.subscribe needs a listener function')
        listeners.add(listener)
        return async () => void listeners.delete(listener)
      },
    },
  }
}
