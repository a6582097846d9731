/** Severity of a log line. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

/** Structured fields of a log line. Never put tokens or full request URLs here. */
export type LogFields = Record<string, string | number | boolean | null | undefined>

/** A structured logger: one JSON object per line. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
}

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

/**
 * Create a JSON-lines logger writing to `write` (stdout by default).
 *
 * @example
 * const log = createLogger({ level: 'info' })
 * log.info('listening', { port: 1234 })  // {"time":"…","level":"info","msg":"listening","port":1234}
 */
export function createLogger(options: { level?: LogLevel; write?: (line: string) => void } = {}): Logger {
  const min = rank[options.level ?? 'info']
  const write =
    options.write ??
    ((line: string) => {
      process.stdout.write(line + '\n')
    })
  const emit = (level: LogLevel, msg: string, fields?: LogFields): void => {
    if (rank[level] < min) return
    write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }))
  }
  return {
    debug: (msg, fields) => {
      emit('debug', msg, fields)
    },
    info: (msg, fields) => {
      emit('info', msg, fields)
    },
    warn: (msg, fields) => {
      emit('warn', msg, fields)
    },
    error: (msg, fields) => {
      emit('error', msg, fields)
    },
  }
}

/** A logger that drops everything (tests, embedding). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** The message of an unknown thrown value, for a log field. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
