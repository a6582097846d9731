import { tokenizePath } from '@langchain/langgraph-checkpoint'

/** Engram passages hold at most this many characters. */
const MAX_TEXT = 200_000

/**
 * The text of an item that full-text and vector search see, from LangGraph
 * index paths: `$` (the whole value as JSON), `field.nested`, `list[*].field`,
 * `list[0]`, `list[-1]`, `{a,b}`. Strings are taken as they are, other leaves
 * as JSON. Undefined when nothing is found (the item is then not searchable).
 */
export function indexText(value: Record<string, unknown>, paths: readonly string[]): string | undefined {
  const texts = paths.flatMap((path) => (path === '$' ? [JSON.stringify(value, null, 2)] : textsAt(value, tokenizePath(path))))
  const text = texts.filter((t) => t.trim() !== '').join('\n')
  return text === '' ? undefined : text.slice(0, MAX_TEXT)
}

function textsAt(value: unknown, tokens: readonly string[]): string[] {
  const [token, ...rest] = tokens
  if (token === undefined) return leafText(value)
  if (token.startsWith('[') && token.endsWith(']')) {
    if (!Array.isArray(value)) return []
    const index = token.slice(1, -1)
    if (index === '*') return value.flatMap((item) => textsAt(item, rest))
    const n = Number.parseInt(index, 10)
    const at = n < 0 ? value.length + n : n
    return Number.isInteger(at) && at >= 0 && at < value.length ? textsAt(value[at], rest) : []
  }
  if (typeof value !== 'object' || value === null) return []
  const record = value as Record<string, unknown>
  if (token.startsWith('{') && token.endsWith('}')) {
    return token
      .slice(1, -1)
      .split(',')
      .flatMap((field) => textsAt(record, [...tokenizePath(field.trim()), ...rest]))
  }
  if (token === '*') return Object.values(record).flatMap((v) => textsAt(v, rest))
  return Object.hasOwn(record, token) ? textsAt(record[token], rest) : []
}

function leafText(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)]
  if (value === null || value === undefined) return []
  return [JSON.stringify(value, null, 2)]
}
