import type { HitKind } from '../types.js'
import type { IndexChanges } from '../index/index-state.js'

/** The vectors of one project in one contiguous Float32Array (row i at i * dimensions). */
export interface ProjectVectors {
  dimensions: number
  count: number
  data: Float32Array
  docIds: string[]
  kinds: HitKind[]
  sids: (string | undefined)[]
  ats: number[]
  slots: Map<string, number>
}

/**
 * Per-project vector caches, loaded lazily from the `vectors` table on the
 * first vector query and grown in place as the embed queue drains
 * (vector-fill.ts). Index writes only drop caches, so this part is all they load.
 */
export class VectorCache {
  private readonly projects = new Map<string, ProjectVectors>()
  epoch = 0

  get(projectId: string): ProjectVectors | undefined {
    return this.projects.get(projectId)
  }

  /** Keeps a project's freshly built cache, unless vectors changed since `epoch` (the reading began). */
  keep(projectId: string, pv: ProjectVectors, epoch: number): void {
    if (epoch === this.epoch) this.projects.set(projectId, pv)
  }

  /** Drops every project's cache (the stored vectors were dropped). */
  clear(): void {
    this.projects.clear()
    this.epoch++
  }

  /** Drops the caches of projects that lost vectors; they reload on the next query. */
  apply(changes: IndexChanges): void {
    if (!changes.reset && changes.vectorProjects.size === 0) return
    if (changes.reset) this.projects.clear()
    for (const projectId of changes.vectorProjects) this.projects.delete(projectId)
    this.epoch++
  }
}
