/**
 * The first part of `value` that structured cloning (and so `postMessage`)
 * refuses, as `[path, what]` — e.g. `['tags[1]', 'a symbol']`, `['', 'a function']`
 * for the value itself. The deepest refused part is named: a part is searched
 * only when it does not clone, each object once.
 *
 * @returns undefined when `value` clones.
 */
export function findUncloneable(value: unknown, path = '', seen = new Set<unknown>()): [path: string, what: string] | undefined {
  if (seen.has(value)) return undefined
  try {
    structuredClone(value)
    return undefined
  } catch {
    // refused: below, which part
  }
  const isObject = typeof value === 'object' && value !== null
  if (isObject) {
    seen.add(value)
    const parts: [string, unknown][] =
      value instanceof Map
        ? [...value].flatMap(([k, v]): [string, unknown][] => [
            [`${path}<key>`, k],
            [`${path}.get(${String(k)})`, v],
          ])
        : value instanceof Set
          ? [...value].map((v) => [`${path}<item>`, v])
          : Object.entries(value).map(([k, v]) => [Array.isArray(value) ? `${path}[${k}]` : path ? `${path}.${k}` : k, v])
    for (const [at, part] of parts) {
      const found = findUncloneable(part, at, seen)
      if (found) return found
    }
  }
  return [path, `a ${isObject ? Object.prototype.toString.call(value).slice(8, -1) : typeof value}`]
}

/**
 * Which argument of a call `postMessage` refused, and which field of it:
 * `argument 3 field tags[1] is a symbol, which cannot be sent…`. The first argument that does not
 * clone is named; a listener Comlink sends as a proxy comes last in every
 * call that takes one, after any argument it could be mistaken for.
 */
export function describeUncloneable(args: readonly unknown[]): string {
  for (const [i, arg] of args.entries()) {
    const found = findUncloneable(arg)
    if (found !== undefined)
      return `argument ${i + 1}${found[0] === '' ? '' : ` field ${found[0]}`} is ${found[1]}, which cannot be sent to the worker (arguments are structured-cloned: pass plain data)`
  }
  return 'an argument cannot be sent to the worker'
}
