import { describe, expect, it } from 'vitest'
import { parserOptions } from './cli-options.js'
import { envName, flags } from './flags.js'
import { usage } from './usage.js'

describe('--help', () => {
  it('lists every option the parser knows', () => {
    const missing = Object.keys(parserOptions).filter((name) => !new RegExp(`--${name}\\b`).test(usage))
    expect(missing).toEqual([])
    expect(usage).toContain('-h')
  })

  it('names the environment variable of every flag the environment can set, and the environment-only ones', () => {
    const withEnv = Object.keys(flags).filter((name) => flags[name]!.env)
    expect(withEnv.length).toBeGreaterThan(30)
    expect(withEnv.filter((name) => !usage.includes(envName(name)))).toEqual([])
    for (const name of ['PORT', 'NODE_ENV', 'ENGRAM_RELAY_SECRET', 'ENGRAM_RELAY_POSTGRES', 'ENGRAM_RELAY_INTEGRITY_CHECK']) expect(usage).toContain(name)
  })

  it('names the commands', () => {
    for (const command of ['engram-relay [serve]', 'engram-relay token --user', 'engram-relay revoke --user']) expect(usage).toContain(command)
  })
})
