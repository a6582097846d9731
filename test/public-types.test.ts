import { fileURLToPath } from 'node:url'
import * as ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const PACKAGES = ['core', 'sync', 'worker', 'langgraph', 'ai-sdk', 'react', 'embed-local'] as const

/**
 * Every type named in a public signature of a package must be exported by the
 * package that declares it, so apps can write `const input: MessageInput = …`
 * instead of `Parameters<…>[1]`.
 */
function unexportedTypes(): Record<string, string[]> {
  const entries = PACKAGES.map((p) => `${root}packages/${p}/src/index.ts`)
  const program = ts.createProgram(entries, {
    strict: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    customConditions: ['source'],
    noEmit: true,
  })
  const checker = program.getTypeChecker()
  const resolve = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s)
  const exportsOf = new Map(
    PACKAGES.map((p, i) => [p, new Set(checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(entries[i]!)!)!).map(resolve))]),
  )
  const packageOf = (d: ts.Declaration) => PACKAGES.find((p) => d.getSourceFile().fileName.startsWith(`${root}packages/${p}/src/`))
  const missing: Record<string, string[]> = {}

  for (const pkg of PACKAGES) {
    const seen = new Set<ts.Symbol>()
    const found = new Set<string>()
    const check = (symbol: ts.Symbol): void => {
      if (seen.has(symbol)) return
      seen.add(symbol)
      const declarations = (symbol.declarations ?? []).filter((d) => packageOf(d) !== undefined)
      const isType = declarations.some((d) => ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d) || ts.isClassDeclaration(d))
      if (!isType) return
      const owner = packageOf(declarations[0]!)!
      if (!exportsOf.get(owner)!.has(symbol)) found.add(`${symbol.name} (packages/${owner})`)
      // Members of a public type are public signatures too.
      for (const d of declarations) visit(d)
    }
    const visit = (node: ts.Node): void => {
      // Signatures only: a function body or an initializer is not part of the public shape.
      if (ts.isBlock(node) || (ts.isVariableDeclaration(node.parent) && node === node.parent.initializer)) return
      // A class's `#private` members are not part of its public shape.
      if (ts.isClassElement(node) && node.name !== undefined && ts.isPrivateIdentifier(node.name)) return
      if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
        const symbol = checker.getSymbolAtLocation(ts.isTypeReferenceNode(node) ? node.typeName : node.expression)
        if (symbol) check(resolve(symbol))
      }
      ts.forEachChild(node, visit)
    }
    for (const symbol of exportsOf.get(pkg)!) for (const d of symbol.declarations ?? []) if (packageOf(d) === pkg) visit(d)
    missing[pkg] = [...found].sort()
  }
  return missing
}

describe('public types', () => {
  it('every type used in a public signature of @engram/core, /sync, /worker and the adapters is exported by its package', () => {
    expect(unexportedTypes()).toEqual({ core: [], sync: [], worker: [], langgraph: [], 'ai-sdk': [], react: [], 'embed-local': [] })
  })
})
