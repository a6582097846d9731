import type { Embedder } from '@engram/core'

/** An embedder that counts (and keeps) the texts it embedded, so a run can wait for a backfill to end. */
export interface CountingEmbedder extends Embedder {
  done: number
  texts: string[]
  /** Resolves once `n` texts in all were embedded. */
  until(n: number): Promise<void>
}

/** Wraps `inner` to count what it embeds. */
export function counting(inner: Embedder): CountingEmbedder {
  let wake: (() => void) | undefined
  const e: CountingEmbedder = {
    dimensions: inner.dimensions,
    ...(inner.model === undefined ? {} : { model: inner.model }),
    done: 0,
    texts: [],
    async embed(texts: string[]) {
      const out = await inner.embed(texts)
      e.done += texts.length
      e.texts.push(...texts)
      wake?.()
      return out
    },
    until(n: number) {
      return new Promise<void>((resolve) => {
        wake = () => {
          if (e.done >= n) resolve()
        }
        wake()
      })
    },
  }
  return e
}
