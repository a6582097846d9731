import { pending } from './pending.js'
import type { Source } from './schema.js'
import type { StoreContext } from './store-context.js'
import type { Json } from './validate.js'

/** A fact: a key → JSON value the agent believes, with provenance. */
export interface Fact {
  id: string; projectId: string; key: string; value: Json; confidence: number; source?: Source
  tags: string[]; createdAt: number; updatedAt: number; deletedAt?: number; version: number
}
/** One version of a fact in its history. */
export interface FactVersion { key: string; value: Json; version: number; validFrom: number; validTo?: number; deleted: boolean; source?: Source; confidence: number }
/** Options of {@link FactsApi.set}. */
export interface SetFactOptions { confidence?: number; source?: Source; tags?: string[] }
/** Options of {@link FactsApi.list}. */
export interface ListFactsOptions { tag?: string; prefix?: string; limit?: number; offset?: number }

/** Facts of a project: upsert by key with history, soft delete and restore. */
export interface FactsApi {
  set(projectId: string, key: string, value: Json, options?: SetFactOptions): Promise<Fact>
  get(projectId: string, key: string): Promise<Fact | undefined>
  list(projectId: string, options?: ListFactsOptions): Promise<Fact[]>
  delete(projectId: string, key: string): Promise<boolean>
  deleteAll(projectId: string, options?: { tag?: string }): Promise<number>
  restore(projectId: string, key: string): Promise<Fact | undefined>
  deleted(projectId: string): Promise<Fact[]>
  purge(projectId: string, key?: string): Promise<number>
  history(projectId: string, key: string): Promise<FactVersion[]>
  at(projectId: string, key: string, time: number): Promise<Json | undefined>
}

/** Creates the facts namespace of a store. */
export function createFacts(ctx: StoreContext): FactsApi {
  return pending('facts', ctx)
}
