import type { LanguageModelMiddleware } from 'ai'

/** The call options a middleware sees (the provider spec's prompt, tools, abort signal, …). */
export type CallParams = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params']
/** The prompt of a call: system, user, assistant and tool messages. */
export type Prompt = CallParams['prompt']

/** The last user message of a prompt: where it is and its text. */
export interface UserTurn {
  index: number
  text: string
}

/** The last user message, or undefined when the prompt has none. */
export function lastUserMessage(prompt: Prompt): UserTurn | undefined {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i]!
    if (message.role !== 'user') continue
    const text = message.content
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('\n')
      .trim()
    return { index: i, text }
  }
  return undefined
}

/**
 * The prompt with Engram's context put in front of the user message at
 * `index`, as its first text part. The system prompt and the history before it
 * stay byte-identical, and within a turn the context is the one stored at
 * `turns.begin`, so every step of a tool loop sends the same prefix and
 * provider prompt caches hit.
 */
export function withContext(prompt: Prompt, index: number, contextText: string): Prompt {
  if (contextText.trim() === '') return prompt
  const message = prompt[index]
  if (message?.role !== 'user') return prompt
  const part = { type: 'text' as const, text: `<memory source="engram">\n${contextText}\n</memory>` }
  const next = [...prompt]
  next[index] = { ...message, content: [part, ...message.content] }
  return next
}
