import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

/*
 * What `npm publish` would ship of @engram/relay: the compiled relay, its bin,
 * the deploy files, README and LICENSE; no tests, sources, maps or secrets.
 * `npm test` builds (tsc -b) before vitest; run alone, this builds first.
 */
const pkg = join(import.meta.dirname, '..')
const root = join(pkg, '..', '..')

interface PackedFile {
  path: string
  mode: number
}

let files: PackedFile[] = []
const paths = (): string[] => files.map((f) => f.path)

beforeAll(() => {
  if (!existsSync(join(pkg, 'dist', 'main.js')) || !existsSync(join(root, 'packages', 'sync', 'dist', 'close-codes.js')))
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(pkg, 'tsconfig.json')], { cwd: root, stdio: 'inherit' })
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: pkg, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  files = (JSON.parse(out) as Array<{ files: PackedFile[] }>)[0]!.files
}, 300_000)

describe('@engram/relay tarball', () => {
  it('ships the compiled relay, its bin, the deploy files, README and LICENSE', () => {
    for (const path of [
      'package.json',
      'README.md',
      'LICENSE',
      'bin/engram-relay.js',
      'dist/main.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/create-relay.js',
      'dist/storage/persistence-sqlite.js',
      'deploy/engram-relay.service',
      'deploy/engram-relay.env.example',
    ])
      expect(paths()).toContain(path)
    expect(files.find((f) => f.path === 'bin/engram-relay.js')!.mode & 0o111).not.toBe(0)
  })

  it('ships no tests, sources, source maps, build info or secrets', () => {
    const unwanted = paths().filter(
      (path) =>
        /\.test\.|(^|\/)test\//.test(path) ||
        /^src\//.test(path) ||
        /\.map$|\.tsbuildinfo$/.test(path) ||
        /(^|\/)\.env$|\.npmrc$|\.pem$|\.key$|\.sqlite/.test(path) ||
        !/^(package\.json|README\.md|LICENSE|bin\/|dist\/|deploy\/)/.test(path),
    )
    expect(unwanted).toEqual([])
    const example = readFileSync(join(pkg, 'deploy', 'engram-relay.env.example'), 'utf8')
    expect(example).toMatch(/^ENGRAM_RELAY_SECRET=$/m)
    expect(example).not.toMatch(/^\s*[^#\s][^=]*(SECRET|TOKEN|PASSWORD)[^=]*=\S/m)
  })

  it('ships no stale output: every compiled module has its source', () => {
    const stale = paths()
      .filter((path) => path.startsWith('dist/') && path.endsWith('.js'))
      .filter((path) => !existsSync(join(pkg, path.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts'))))
    expect(stale).toEqual([])
  })

  it('runs dist/main.js from its bin unless the source condition is on, and loads only the close codes of @engram/sync', () => {
    const resolve = (conditions: string[], spec: string): string =>
      execFileSync(process.execPath, [...conditions, '--input-type=module', '-e', `console.log(import.meta.resolve(${JSON.stringify(spec)}))`], {
        cwd: pkg,
        encoding: 'utf8',
      }).trim()
    expect(resolve([], '#main')).toBe(`file://${join(pkg, 'dist', 'main.js')}`)
    expect(resolve(['--conditions=source'], '#main')).toBe(`file://${join(pkg, 'src', 'main.ts')}`)
    const closeCodes = resolve([], '@engram/sync/close-codes')
    expect(closeCodes).toMatch(/\/packages\/sync\/dist\/close-codes\.js$/)
    const leaf = readFileSync(new URL(closeCodes), 'utf8')
    expect(leaf.split('\n').filter((line) => /^\s*import\b|^\s*export\b.*\bfrom\s*['"]|\bimport\(|\brequire\(/.test(line))).toEqual([])
  })
})
