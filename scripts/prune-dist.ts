/**
 * Run before `npm pack` in a package (its `prepack`): deletes the files of
 * `dist/` whose source in `src/` is gone. `tsc -b` never deletes the outputs of
 * a source that was removed or moved, so without this a package would ship
 * stale modules next to the current ones.
 */
import { existsSync, readdirSync, rmdirSync, statSync, unlinkSync } from 'node:fs'
import { join, relative } from 'node:path'

const dist = join(process.cwd(), 'dist')
const src = join(process.cwd(), 'src')
const OUTPUT = /\.(?:d\.ts|js)(?:\.map)?$/

/** Deletes stale outputs under `dir`; returns whether `dir` is empty afterwards. */
function prune(dir: string): boolean {
  let left = 0
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) {
      if (prune(path)) rmdirSync(path)
      else left++
      continue
    }
    const base = join(src, relative(dist, path)).replace(OUTPUT, '')
    if (OUTPUT.test(name) && !existsSync(`${base}.ts`) && !existsSync(`${base}.tsx`)) unlinkSync(path)
    else left++
  }
  return left === 0
}

if (existsSync(dist)) prune(dist)
