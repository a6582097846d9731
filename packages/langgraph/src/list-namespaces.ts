import type { ListNamespacesOperation, MatchCondition } from '@langchain/langgraph-checkpoint'

/**
 * Answers a `listNamespaces` operation over the namespaces that hold items:
 * every match condition (prefix / suffix, `*` matches any label), then
 * `maxDepth` truncation with duplicates removed, sorted, then offset and limit.
 */
export function selectNamespaces(namespaces: readonly string[][], op: ListNamespacesOperation): string[][] {
  let found = namespaces.filter((ns) => (op.matchConditions ?? []).every((c) => matches(c, ns)))
  if (op.maxDepth !== undefined) found = found.map((ns) => ns.slice(0, op.maxDepth))
  const unique = new Map(found.map((ns) => [JSON.stringify(ns), ns]))
  const sorted = [...unique.values()].sort(compareNamespaces)
  const offset = op.offset ?? 0
  return sorted.slice(offset, offset + (op.limit ?? sorted.length))
}

function matches({ matchType, path }: MatchCondition, ns: readonly string[]): boolean {
  if (path.length > ns.length) return false
  const start = matchType === 'prefix' ? 0 : ns.length - path.length
  return path.every((label, i) => label === '*' || ns[start + i] === label)
}

/** Label by label, so `a/b` sorts before `a/b/c` and `a/bc`. */
function compareNamespaces(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!
    const y = b[i]!
    if (x !== y) return x < y ? -1 : 1
  }
  return a.length - b.length
}
