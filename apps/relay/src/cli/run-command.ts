import { revokeUser } from '../auth/revoke-command.js'
import { mintToken } from '../auth/tokens.js'
import { silentLogger } from '../log.js'
import { usage } from './cli-options.js'
import type { CliCommand } from './cli-options.js'
import { openBackend } from './open-backend.js'
import { serve } from './serve.js'

/**
 * Run a parsed command: print the usage, print a token, revoke a user's
 * tokens, or serve. Results go to stdout, warnings to stderr.
 *
 * @throws Error when the store cannot be opened, or serving cannot start.
 */
export async function runCommand(cmd: CliCommand, env: NodeJS.ProcessEnv): Promise<void> {
  if (cmd.kind === 'help') {
    process.stdout.write(usage + '\n')
    return
  }
  if (cmd.kind === 'token') {
    if (cmd.devSecret) process.stderr.write('warning: signed with the development secret; set ENGRAM_RELAY_SECRET or --secret\n')
    const { scope, audience, issuer } = cmd
    process.stdout.write((await mintToken(cmd.secret, cmd.user, cmd.ttlSeconds, { scope, audience, issuer })) + '\n')
    return
  }
  if (cmd.kind === 'revoke') {
    const backend = await openBackend(cmd, `revoke-${process.pid}`, silentLogger)
    try {
      const result = await revokeUser(cmd.user, backend.store, backend.fanout)
      process.stdout.write(`revoked tokens of ${cmd.user} issued until ${new Date(result.at).toISOString()}\n`)
      if (result.error !== undefined)
        process.stderr.write(`warning: stored, but not announced on Redis (${result.error}); instances apply it within a second\n`)
    } finally {
      await backend.fanout?.close()
      await backend.store.close()
    }
    return
  }
  await serve(cmd, env)
}
