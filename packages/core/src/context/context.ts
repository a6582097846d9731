import { pending } from '../pending.js'
import type { StoreContext } from '../store-context.js'

/** A section of a built context. */
export type SectionName = 'blocks' | 'facts' | 'recalled' | 'summaries' | 'recent' | 'lessons'
/** What `context.build` returns. */
export interface Context {
  sections: { name: SectionName; text: string; tokens: number; items: number }[]
  text: string
  tokens: number
  omitted: { name: SectionName; items: number; reason: string }[]
}
/** Options of `context.build`. */
export interface BuildContextOptions { projectId: string; sessionId?: string; query?: string; budget: number; sections?: SectionName[] }
/** Condenses overflowing memory into fewer tokens (app-supplied, e.g. an LLM call). */
export interface Summarizer { summarize(texts: string[], maxTokens: number): Promise<string> }

/** Builds prompts that fit a token budget. */
export interface ContextApi { build(options: BuildContextOptions): Promise<Context> }

/** Creates the context builder of a store. */
export function createContextBuilder(ctx: StoreContext, _memory: import("../memory.js").Memory): ContextApi {
  return pending('context', ctx)
}
