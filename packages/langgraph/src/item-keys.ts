/**
 * How an {@link EngramStore} item is named as an Engram fact.
 *
 * The fact key is the namespace labels, each URI-encoded and followed by `/`,
 * then `#` and the URI-encoded item key: `users/u1/#prefs`. Encoding keeps `/`
 * and `#` out of the parts, so the key is unambiguous, sorts by namespace, and
 * a namespace prefix is a key prefix (`users/` covers `users/u1/#prefs`, not
 * `users2/#x`). Facts of the project with other keys are not the store's.
 */

const enc = encodeURIComponent

/** The fact key of the item `key` in `namespace`. */
export function itemFactKey(namespace: readonly string[], key: string): string {
  return `${namespacePrefix(namespace)}#${enc(key)}`
}

/** The fact key prefix of every item in `namespace` and below it. */
export function namespacePrefix(namespace: readonly string[]): string {
  return namespace.map((label) => `${enc(label)}/`).join('')
}

/** The namespace and item key of a fact key, or undefined when the fact is not a store item. */
export function parseItemFactKey(factKey: string): { namespace: string[]; key: string } | undefined {
  const hash = factKey.lastIndexOf('#')
  if (hash < 0) return undefined
  const head = factKey.slice(0, hash)
  if (head !== '' && !head.endsWith('/')) return undefined
  try {
    const namespace = head === '' ? [] : head.slice(0, -1).split('/').map(decodeURIComponent)
    return { namespace, key: decodeURIComponent(factKey.slice(hash + 1)) }
  } catch {
    return undefined
  }
}
