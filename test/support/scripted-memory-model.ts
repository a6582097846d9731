/** What a scripted call sees: its system prompt and its user message, as text. */
export interface ScriptedCall {
  system: string
  prompt: string
}

/** The rough token count the scripted model reports (four characters a token, as the store's estimate). */
export const countTokens = (text: string) => Math.ceil(text.length / 4)

/** The part of the language model spec's call options a scripted model reads. */
interface CallOptions {
  prompt: readonly { role: string; content: string | readonly { type: string; text?: string }[] }[]
}

/**
 * The `doGenerate` of a language model in the AI SDK's spec (v3) that answers every call with the
 * JSON `answer(call)` returns, at once, and reports usage by counting the prompt's characters
 * (wrap it in `ai/test`'s `MockLanguageModelV3`). `calls` keeps what it was asked, in order.
 */
export function scriptedGenerate(answer: (call: ScriptedCall) => unknown | Promise<unknown>) {
  const calls: ScriptedCall[] = []
  return {
    calls,
    doGenerate: async (options: CallOptions) => {
      const system = options.prompt
        .filter((m) => m.role === 'system')
        .map((m) => (typeof m.content === 'string' ? m.content : ''))
        .join('\n')
      const prompt = options.prompt
        .filter((m) => m.role === 'user')
        .flatMap((m) => (typeof m.content === 'string' ? [m.content] : m.content.flatMap((p) => (p.type === 'text' && p.text !== undefined ? [p.text] : []))))
        .join('\n')
      const call = { system, prompt }
      calls.push(call)
      const text = JSON.stringify(await answer(call))
      const input = countTokens(system) + countTokens(prompt)
      const output = countTokens(text)
      return {
        content: [{ type: 'text' as const, text }],
        finishReason: { unified: 'stop' as const, raw: 'stop' },
        usage: { inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: output, text: output, reasoning: 0 } },
        warnings: [],
      }
    },
  }
}
