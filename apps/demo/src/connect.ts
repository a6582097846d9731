import type { Memory } from '@engram/core'
import { connectMemory } from '@engram/worker'
import { aiExtractor } from '@engram/ai-sdk'
import { scriptedMemoryModel } from './agent/scripted-memory-model.js'

/** The remote memory the demo talks to: every call crosses into the worker. */
export type DemoMemory = Memory

/** What the demo server tells the page (absent when the page is served statically). */
export interface DemoConfig {
  relayUrl?: string
}

/** The demo's app id: names its IndexedDB database `engram:engram-demo:<userId>`. */
export const appId = 'engram-demo'

/** Reads `/demo-config.json`; without it the demo runs local-only (no sync). */
export async function loadConfig(): Promise<DemoConfig> {
  try {
    const response = await fetch('./demo-config.json', { cache: 'no-store' })
    return response.ok ? ((await response.json()) as DemoConfig) : {}
  } catch {
    return {}
  }
}

/**
 * Fetches a relay token for `userId` from the development endpoint of the
 * start script. A production app asks its own backend instead, which checks
 * who the user is and signs `{ sub: userId, exp }` with the relay's secret.
 *
 * @throws Error when the endpoint is unreachable or refuses.
 */
export async function fetchDevToken(userId: string): Promise<string> {
  const response = await fetch(`./dev-token?user=${encodeURIComponent(userId)}`, { cache: 'no-store' })
  if (!response.ok) throw new Error(`dev-token: HTTP ${response.status}`)
  const body = (await response.json()) as { token?: unknown }
  if (typeof body.token !== 'string') throw new Error('dev-token: no token in the answer')
  return body.token
}

/**
 * Starts the SDK worker and connects to it: memory for `userId`, synced through
 * the relay when there is one, with `aiExtractor` on the scripted memory model: after each turn,
 * the worker's queue runs it in the background and the model call comes back to this page.
 *
 * @throws MemoryError from opening the store (e.g. `quota_exceeded`).
 */
export async function openDemoMemory(userId: string, device: string, config: DemoConfig): Promise<DemoMemory> {
  const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: `engram-demo-${device}` })
  return await connectMemory(worker, {
    appId,
    userId,
    extractor: aiExtractor({ model: scriptedMemoryModel() }),
    ...(config.relayUrl ? { sync: { url: config.relayUrl, token: () => fetchDevToken(userId) } } : {}),
  })
}
