import type { EncryptionStatus } from '@engram/core'

/** The canaries one run writes: each goes in through one API. */
export interface AtRestCanaries {
  factKey: string
  factValue: string
  blockValue: string
  sessionTitle: string
  userMessage: string
  assistantMessage: string
  messageMeta: string
}

/** What `at-rest-page.ts` puts on `window`: a store in the page, its conversations synced over a loopback network. */
export interface AtRestHarness {
  /** Opens the store (with the AES-GCM key of `key`'s raw bytes, else plain) and starts sync of project `p`, conversations included. */
  open(userId: string, key?: number[]): Promise<EncryptionStatus>
  /** Writes the canaries (a fact, a block, a session with messages) and waits until sync stored them. */
  write(canaries: AtRestCanaries): Promise<void>
  /** Encrypts the plain store with `key` while sync runs; resolves with the status once done and synced. */
  enable(key: number[]): Promise<EncryptionStatus>
  /** What the store reads back of `canaries`, through the API. */
  read(canaries: AtRestCanaries): Promise<{ fact: unknown; block: unknown; messages: string[] }>
  /** Names of every IndexedDB database of the origin. */
  databases(): Promise<string[]>
  /** Stops sync and closes the store. */
  close(): Promise<void>
}

declare global {
  interface Window {
    atRest: AtRestHarness
  }
}
