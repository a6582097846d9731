/** `engram-relay`: flags and environment → a command (serve, token, revoke, help). */
import { parseCli } from './cli/cli-options.js'
import { runCommand } from './cli/run-command.js'
import { errorMessage } from './log.js'

async function main(): Promise<void> {
  await runCommand(parseCli(process.argv.slice(2), process.env), process.env)
}

main().catch((err: unknown) => {
  process.stderr.write(`engram-relay: ${errorMessage(err)}\n`)
  process.exit(1)
})
