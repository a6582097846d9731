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

/** `clock`: this device's clock is off the relay's by more than sync's bound. */
export interface ClockWarning {
  type: 'clock'
  message: string
  /** Relay time minus this device's clock, ms (positive: this clock is slow). */
  offsetMs: number
  /** Since when it holds (epoch ms). */
  since: number
}

/** A record this device holds at a stamp far ahead of its clock (listed by a `stamps_ahead` warning). */
export interface StampAheadRecord {
  projectId: string
  /** Its kind: `facts`, `blocks`, `summaries`, `patterns`, `sessions`, `messages`, … */
  kind: string
  /** Its id in the project's documents. */
  id: string
  /** The fact's key or the block's label, for the kinds keyed by one. */
  name?: string
  /** The stamp it is held at (its first 13 digits are epoch ms). */
  hlc: string
  /** The device the stamp names: the one that wrote this version of the record. */
  deviceId: string
}

/**
 * `stamps_ahead`: records synced to this device carry stamps more than sync's clock-lead bound
 * ahead of its clock (corrected by the relay's time): a device with a wrong clock wrote them
 * (e.g. one set to 2099). They are applied as on every device, never set aside, and the next
 * edit of each on any device wins over it; the warning goes when no held record is ahead any more.
 */
export interface StampsAheadWarning {
  type: 'stamps_ahead'
  message: string
  /** How many records are ahead, in every synced project. */
  count: number
  /** The records, at most {@link MAX_LISTED_STAMPS_AHEAD}: the furthest ahead first. */
  records: StampAheadRecord[]
  /** Since when it holds (epoch ms). */
  since: number
}

/** The most records a `stamps_ahead` warning lists (its `count` says how many there are). */
export const MAX_LISTED_STAMPS_AHEAD = 100

/** A condition the app should show that is not a failed background task, current only. */
export type StatusWarning = ClockWarning | StampsAheadWarning

/** What {@link StatusHub.warn} takes for a warning of type `T`. */
export type WarningBody<T extends StatusWarning['type']> = Omit<Extract<StatusWarning, { type: T }>, 'type' | 'since'>

/** The state of one background component. `failing` means its last attempt failed (it retries where it can). */
export interface ComponentStatus {
  state: 'off' | 'ok' | 'failing'
  /** The failure that put it in `failing`; kept after recovery as history. */
  lastError?: BackgroundProblem
}

/** The background extraction queue, as `memory.status.get().extractor.queue` shows it. */
export interface ExtractionQueueStatus {
  /** Jobs waiting or running. */
  backlog: number
  /** Jobs set aside after their last attempt failed (`memory.extraction.retry()` queues them again). */
  failed: number
  /** Set while a project's daily token budget holds the queue: until when (epoch ms, the next UTC day). */
  budget?: { projectId: string; until: number }
  /**
   * The last job whose answer held operations memory refused (they were skipped whole, the
   * others applied; the journal's `turn.extracted` record lists them too).
   */
  rejected?: ExtractionRejection
}

/** Operations of one extraction job that memory refused, as `extractor.queue.rejected` shows them. */
export interface ExtractionRejection {
  projectId: string
  sessionId: string
  turnId: string
  /** When the job was applied (epoch ms). */
  at: number
  /** Each refused operation: its place in the answer, its `op`, and why. */
  operations: { index: number; op: string; code: string; message: string }[]
}

/** Everything that runs in the background of a store, in one place. */
export interface MemoryStatus {
  embedder: ComponentStatus
  summarizer: ComponentStatus
  /** `queue` is there when the extractor runs in the background (a `BackgroundExtractor`). */
  extractor: ComponentStatus & { queue?: ExtractionQueueStatus }
  sync: ComponentStatus & { projects: Record<string, SyncState> }
  /** The most recent background failures (at most 20), oldest first. */
  problems: BackgroundProblem[]
  /** What the app should show now besides failures (a `clock` or a `stamps_ahead` warning); empty when all is well. */
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
  /** Sets what the background extraction queue holds (shown as `extractor.queue`). */
  setQueue(queue: ExtractionQueueStatus): void
  /** Sets one project's sync state (`off` removes it). */
  setSync(projectId: string, state: SyncState): void
  /** Shows a warning of `type` (replacing the one shown), or clears it with undefined. */
  warn<T extends StatusWarning['type']>(type: T, warning: WarningBody<T> | undefined): void
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
  let queue: ExtractionQueueStatus | undefined
  const listeners = new Set<(status: MemoryStatus) => void>()

  function snapshot(): MemoryStatus {
    const copy = (s: BackgroundSource): ComponentStatus => ({ ...components.get(s)! })
    return {
      embedder: copy('embedder'),
      summarizer: copy('summarizer'),
      extractor: queue ? { ...copy('extractor'), queue: { ...queue, ...(queue.budget ? { budget: { ...queue.budget } } : {}) } } : copy('extractor'),
      sync: { ...copy('sync'), projects: Object.fromEntries(syncProjects) },
      problems: problems.map((p) => ({ ...p })),
      warnings: [...warnings.values()].map((w) => structuredClone(w)),
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
    setQueue(next) {
      if (
        queue &&
        queue.backlog === next.backlog &&
        queue.failed === next.failed &&
        queue.budget?.until === next.budget?.until &&
        queue.budget?.projectId === next.budget?.projectId &&
        queue.rejected === next.rejected
      )
        return
      queue = next
      changed()
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
      if (current !== undefined && sameBody(current, warning)) return
      warnings.set(type, { type, ...warning, since: current?.since ?? now() } as unknown as StatusWarning)
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

/** Whether a shown warning says the same as a new body (nothing to tell listeners). */
function sameBody(current: StatusWarning, body: object): boolean {
  const { type: _type, since: _since, ...shown } = current
  return JSON.stringify(shown) === JSON.stringify(body)
}
