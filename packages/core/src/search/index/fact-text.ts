/** The text a fact is indexed and shown as: `key: value` (strings unquoted). */
export function factText(key: string, value: unknown): string {
  return `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`
}
