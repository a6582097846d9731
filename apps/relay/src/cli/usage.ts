import { defaultLimits } from '../limits/limits.js'
import { envName, flags, limitFlags } from './flags.js'
import type { FlagGroup } from './flags.js'

const headings: Record<FlagGroup, string> = {
  serve: 'Serving',
  storage: 'Storage (serve, revoke)',
  tokens: 'Tokens (serve, token)',
  token: 'Token and revoke commands',
  limits: 'Limits (serve)',
}

/** One flag in two lines: flag and variable, then what it does and its default. */
function describe(name: string): string {
  const spec = flags[name]!
  const limit = limitFlags[name]
  const fallback = limit === undefined ? spec.default : String(defaultLimits[limit.key])
  const flag = `  --${name}${spec.arg === undefined ? '' : ` ${spec.arg}`}`
  const env = spec.env ? envName(name) : ''
  return `${`${flag.padEnd(44)} ${env}`.trimEnd()}\n      ${spec.help}${fallback === undefined ? '' : ` (default ${fallback})`}`
}

/** Usage text for `--help`: the commands, then every flag with its environment variable and default. */
export const usage = [
  'engram-relay [serve] [flags]      serve y-websocket sync (the default command)',
  'engram-relay token --user ID [--ttl 1h] [--scope read|write] [--secret S] [--token-audience AUD] [--token-issuer ISS]',
  '                                  print a signed token on stdout (nothing else)',
  'engram-relay revoke --user ID [storage flags]',
  "                                  refuse the user's tokens issued until now, on every instance",
  'engram-relay --help | -h | help   this text',
  '',
  'Each flag with a variable can be set in the environment instead; the flag wins.',
  ...(Object.keys(headings) as FlagGroup[]).flatMap((group) => [
    '',
    `${headings[group]}:`,
    ...Object.keys(flags)
      .filter((name) => flags[name]!.group === group)
      .map(describe),
  ]),
  '',
  'Environment only:',
  '  PORT                                       the port when neither --port nor ENGRAM_RELAY_PORT is set',
  '  NODE_ENV=production                        refuse to serve with the development secret',
].join('\n')
