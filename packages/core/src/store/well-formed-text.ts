import type { DBCore, DBCoreMutateRequest, Middleware } from 'dexie'

/*
 * Text that syncs is stored well-formed. A lone UTF-16 surrogate (half of an emoji an LLM's
 * output was cut in) has no UTF-8 form: Yjs encodes strings as UTF-8, so every receiver gets
 * U+FFFD in its place while the writer kept the original, and the devices never agree on the
 * value. So the writer stores what every receiver will: U+FFFD. Ids and keys are refused
 * instead (`checkWellFormed`): they name records, and two names must not become one.
 */

/** A lone surrogate: with the `u` flag a surrogate pair is one code point and does not match. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u
const LONE_SURROGATES = /[\uD800-\uDFFF]/gu

/** `text` with every lone surrogate replaced by U+FFFD, as a UTF-8 encoder writes it; the same string when it has none. */
export function wellFormedText(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, '\uFFFD') : text
}

/**
 * `value` with every string in it well-formed, object keys included ({@link wellFormedText}):
 * the same value when nothing changes, else a copy (the value given is never modified). Only
 * plain objects and arrays are walked; anything else (a Blob, bytes) is kept as it is.
 */
export function wellFormedValue<T>(value: T): T {
  return walk(value, new Set()) as T
}

function walk(value: unknown, seen: Set<object>): unknown {
  if (typeof value === 'string') return wellFormedText(value)
  if (typeof value !== 'object' || value === null || seen.has(value)) return value
  if (Array.isArray(value)) {
    seen.add(value)
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const next = walk(value[i], seen)
      if (next !== value[i]) (copy ??= [...value])[i] = next
    }
    seen.delete(value)
    return copy ?? value
  }
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return value
  seen.add(value)
  let copy: Record<string, unknown> | undefined
  for (const [k, v] of Object.entries(value)) {
    const key = wellFormedText(k)
    const next = walk(v, seen)
    if (next === v && key === k) continue
    if (!copy) copy = { ...(value as Record<string, unknown>) }
    if (key !== k) delete copy[k]
    copy[key] = next
  }
  seen.delete(value)
  return copy ?? value
}

/**
 * The middleware that stores the rows of `tables` (the synced kinds') well-formed: every string
 * field of a row written (nested values and object keys too) with lone surrogates replaced by
 * U+FFFD, whatever wrote it (an API call, a record from another device, an import). Fields are
 * replaced on the row (a nested value by a copy, so the caller's objects are never changed), so
 * what the write returns is what it stored. Above the at-rest encryption, which seals the result.
 */
export function wellFormedTextMiddleware(tables: ReadonlySet<string>): Middleware<DBCore> {
  return {
    stack: 'dbcore',
    name: 'EngramWellFormedText',
    level: 4,
    create(down) {
      return {
        ...down,
        table(name) {
          const table = down.table(name)
          if (!tables.has(name)) return table
          return {
            ...table,
            mutate(req: DBCoreMutateRequest) {
              if (req.type === 'add' || req.type === 'put') {
                const seen = new Set<object>()
                for (const row of req.values) {
                  if (row === null || typeof row !== 'object') continue
                  for (const [field, v] of Object.entries(row)) {
                    const next = walk(v, seen)
                    if (next !== v) (row as Record<string, unknown>)[field] = next
                  }
                }
              }
              return table.mutate(req)
            },
          }
        },
      }
    },
  }
}
