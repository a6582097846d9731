import { pending } from './pending.js'
import type { StoreContext } from './store-context.js'
import type { Json } from './validate.js'

/** A message's author. */
export type Role = 'user' | 'assistant' | 'system' | 'tool'
/** A message in a session; `seq` is gap-free per session. */
export interface Message { id: string; sessionId: string; projectId: string; seq: number; role: Role; content: string; tokens: number; createdAt: number; meta?: Json }

/** Messages of conversation sessions. */
export interface MessagesApi {
  append(sessionId: string, message: { role: Role; content: string; meta?: Json }): Promise<Message>
  appendExchange(sessionId: string, userText: string, assistantText: string): Promise<[Message, Message]>
  tail(sessionId: string, n: number): Promise<Message[]>
  page(sessionId: string, options: { after?: number; limit: number }): Promise<{ items: Message[]; next?: number }>
}

/** Creates the messages namespace of a store. */
export function createMessages(ctx: StoreContext): MessagesApi {
  return pending('messages', ctx)
}
