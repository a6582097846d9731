/**
 * The changed-fact questions of the recall benchmark ("where does X work now / in May"): the
 * conversation of test/fixtures/changed-facts.ts, answered from `context.build` with the
 * knowledge section beside the same build without it, in the same run.
 */
import { evaluateChangedFacts, generateChangedFacts, loadChangedFacts } from '../fixtures/changed-facts.js'
import { printRows } from './stats.js'

const pct = (n: number, of: number) => `${((n / of) * 100).toFixed(0)}%`

/** Runs the changed-fact sets and prints their tables. */
export async function runChangedFactsBench(): Promise<void> {
  for (const [name, seed] of [
    ['changed facts (seed 5, 12 people)', 5],
    ['changed facts (held out, seed 17, 12 people)', 17],
  ] as const) {
    const loaded = await loadChangedFacts(generateChangedFacts(seed))
    const r = await evaluateChangedFacts(loaded)
    printRows(
      `Changed facts — ${name} (${r.questions} questions, context.build at 2,000 tokens)`,
      ['kind', 'questions', 'answered with the knowledge section', 'baseline: the same build without it', 'ratio'],
      [
        ...Object.entries(r.byKind).map(([kind, k]) => [
          kind,
          String(k.questions),
          pct(k.withKnowledge, k.questions),
          pct(k.withoutKnowledge, k.questions),
          k.withoutKnowledge > 0 ? `${(k.withKnowledge / k.withoutKnowledge).toFixed(2)}×` : '—',
        ]),
        [
          'all',
          String(r.questions),
          pct(r.withKnowledge, r.questions),
          pct(r.withoutKnowledge, r.questions),
          r.withoutKnowledge > 0 ? `${(r.withKnowledge / r.withoutKnowledge).toFixed(2)}×` : '—',
        ],
      ],
    )
    if (r.missed.length > 0) console.log(`\nmissed with the knowledge section: ${r.missed.join(' | ')}`)
    await loaded.memory.close()
  }
}
