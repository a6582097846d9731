/** Shared helpers for `npm run bench`: timing, percentiles and markdown tables. */

/** Percentile (0–100) of samples, nearest-rank. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN
  const sorted = [...samples].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}

/** Median of samples. */
export const median = (samples: readonly number[]): number => percentile(samples, 50)

/** Times `fn` once per iteration; returns per-call milliseconds. */
export async function timeEach(iterations: number, fn: (i: number) => Promise<unknown> | unknown): Promise<number[]> {
  const out = new Array<number>(iterations)
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now()
    await fn(i)
    out[i] = performance.now() - t0
  }
  return out
}

/** Times one whole run of `fn` in milliseconds. */
export async function timeOnce(fn: () => Promise<unknown> | unknown): Promise<number> {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

/** One row of a comparison table: ours beside a baseline measured in the same run. */
export interface BenchRow {
  name: string
  ours: number
  baseline: number
  unit: string
  baselineName: string
  goal?: string
}

/** Formats a number for a table. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n)
  if (Math.abs(n) >= 1000) return n.toFixed(0)
  if (Math.abs(n) >= 10) return n.toFixed(1)
  if (Math.abs(n) >= 1) return n.toFixed(2)
  return n.toFixed(3)
}

/** Prints a markdown table of rows with the ratio ours / baseline. */
export function printTable(title: string, rows: readonly BenchRow[]): void {
  const lines = [
    `\n### ${title}\n`,
    '| measurement | Engram | baseline | baseline is | ratio | goal |',
    '| --- | ---: | ---: | --- | ---: | --- |',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${fmt(r.ours)} ${r.unit} | ${fmt(r.baseline)} ${r.unit} | ${r.baselineName} | ${(r.ours / r.baseline).toFixed(2)}× | ${r.goal ?? ''} |`,
    ),
  ]
  console.log(lines.join('\n'))
}

/** Prints a plain markdown table (for figures with no baseline, e.g. sizes or recall). */
export function printRows(title: string, header: readonly string[], rows: readonly (readonly (string | number)[])[]): void {
  const lines = [
    `\n### ${title}\n`,
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map((c) => (typeof c === 'number' ? fmt(c) : c)).join(' | ')} |`),
  ]
  console.log(lines.join('\n'))
}
