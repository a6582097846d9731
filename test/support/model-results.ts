// Helpers for this package's tests (not exported): results in the provider spec's shape.
export const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
}

/** A generate result that answers with text. */
export function textResult(text: string) {
  return { content: [{ type: 'text' as const, text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] }
}

/** A generate result that calls one tool. */
export function toolCallResult(toolName: string, input: object, id = `call-${toolName}`) {
  return {
    content: [{ type: 'tool-call' as const, toolCallId: id, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
    usage,
    warnings: [],
  }
}

/** Stream parts that stream `deltas` as one text and finish. */
export function textStreamParts(deltas: string[], finish = true) {
  return [
    { type: 'stream-start' as const, warnings: [] },
    { type: 'text-start' as const, id: 't1' },
    ...deltas.map((delta) => ({ type: 'text-delta' as const, id: 't1', delta })),
    { type: 'text-end' as const, id: 't1' },
    ...(finish ? [{ type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage }] : []),
  ]
}
