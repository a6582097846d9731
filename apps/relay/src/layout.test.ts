import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

/*
 * The relay's folders and what each may import. The building blocks (storage,
 * cluster, limits, auth, http) never reach up into the rooms, the command
 * line or `createRelay`; rooms use the blocks; only the root (`createRelay`,
 * `main`, `index`) and `cli/` assemble a relay. `log.ts` is the one shared leaf.
 */
const src = import.meta.dirname

const allowed: Record<string, string[]> = {
  storage: ['storage', 'log.ts'],
  cluster: ['cluster', 'log.ts'],
  limits: ['limits', 'storage', 'log.ts'],
  auth: ['auth', 'storage', 'cluster', 'log.ts'],
  http: ['http', 'cluster', 'log.ts'],
  rooms: ['rooms', 'auth', 'storage', 'cluster', 'limits', 'http', 'log.ts'],
  cli: ['cli', 'auth', 'storage', 'cluster', 'limits', 'create-relay.ts', 'log.ts'],
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : []
  })
}

/** Import specifiers of a file; `values` skips `import type` / `export type` (erased, so never a runtime cycle). */
function importsOf(file: string, values = false): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/g)]
    .filter((m) => !values || m[1] === undefined)
    .map((m) => m[2]!)
}

/** `rooms` for `rooms/room.ts`, the file name for a file at the root. */
const areaOf = (file: string): string => relative(src, file).split('/')[0]!

const files = sources(src)

describe('relay layout', () => {
  it('every module lives in a folder, except createRelay, main, index and log', () => {
    expect(
      files
        .filter((f) => !relative(src, f).includes('/'))
        .map((f) => relative(src, f))
        .sort(),
    ).toEqual(['create-relay.ts', 'index.ts', 'log.ts', 'main.ts'])
    expect(new Set(files.map(areaOf).filter((area) => !area.endsWith('.ts')))).toEqual(new Set(Object.keys(allowed)))
  })

  it('each folder imports only the folders below it', () => {
    const offending = files.flatMap((file) => {
      const rule = allowed[areaOf(file)]
      if (rule === undefined) return []
      return importsOf(file)
        .filter((spec) => spec.startsWith('.'))
        .filter((spec) => !rule.includes(areaOf(resolve(dirname(file), spec).replace(/\.js$/, '.ts'))))
        .map((spec) => `${relative(src, file)} → ${spec}`)
    })
    expect(offending).toEqual([])
  })

  it('nothing imports main.ts or index.ts, and only the root and cli/ import create-relay.ts', () => {
    const offending = files.flatMap((file) =>
      importsOf(file)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => relative(src, resolve(dirname(file), spec)).replace(/\.js$/, '.ts'))
        .filter((target) => target === 'main.ts' || target === 'index.ts' || (target === 'create-relay.ts' && !['cli', 'index.ts'].includes(areaOf(file))))
        .map((target) => `${relative(src, file)} → ${target}`),
    )
    expect(offending).toEqual([])
  })

  it('of @engram/sync the relay loads only the close codes, room names and mux frames: leaf modules that load no Yjs', () => {
    const engram = files.flatMap((file) => importsOf(file).filter((spec) => spec.startsWith('@engram/')))
    expect(new Set(engram)).toEqual(new Set(['@engram/sync/close-codes', '@engram/sync/room-name', '@engram/sync/mux-frames']))
    expect(importsOf(join(src, '../../../packages/sync/src/close-codes.ts'))).toEqual([])
    expect(importsOf(join(src, '../../../packages/sync/src/room-name.ts'))).toEqual([])
    expect(importsOf(join(src, '../../../packages/sync/src/mux-frames.ts'))).toEqual(['lib0/decoding', 'lib0/encoding'])
  })

  it('has no cycle of value imports', () => {
    const graph = new Map(
      files.map((file) => [
        file,
        importsOf(file, true)
          .filter((spec) => spec.startsWith('.'))
          .map((spec) => resolve(dirname(file), spec).replace(/\.js$/, '.ts')),
      ]),
    )
    const cycles: string[] = []
    const state = new Map<string, 'visiting' | 'done'>()
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(src, f)).join(' → '))
        return
      }
      state.set(file, 'visiting')
      for (const next of graph.get(file) ?? []) visit(next, [...path, file])
      state.set(file, 'done')
    }
    for (const file of files) visit(file, [])
    expect(cycles).toEqual([])
  })

  it('index.ts only re-exports', () => {
    const text = readFileSync(join(src, 'index.ts'), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
    expect(text.replace(/export\s+(type\s+)?\{[^}]*\}\s+from\s+'[^']+'/g, '').trim()).toBe('')
  })
})
