/**
 * Preloaded into both relays under benchmark (`--import`): on SIGUSR2, run a
 * full GC (needs `--expose-gc`) and write `process.memoryUsage()` as JSON to
 * RELAY_BENCH_MEM_FILE, so memory is measured the same way for both servers.
 */
import { writeFileSync } from 'node:fs'

const file = process.env.RELAY_BENCH_MEM_FILE
if (file !== undefined) {
  process.on('SIGUSR2', () => {
    const gc = (globalThis as { gc?: () => void }).gc
    gc?.()
    writeFileSync(file + '.tmp', JSON.stringify(process.memoryUsage()))
    // Written then renamed, so the reader never sees a partial file.
    import('node:fs').then(
      (fs) => {
        fs.renameSync(file + '.tmp', file)
      },
      () => {},
    )
  })
}
