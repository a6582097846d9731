/**
 * Recall benchmark: the two conversation fixtures through the recall harness,
 * Engram beside MiniSearch (search) and beside a greedy fill of MiniSearch
 * hits (context). `dialogues` at seed 11 is the tuning set; the held-out
 * sets are `conversations` (another style and vocabulary, five times the
 * sessions of the unit-test fixture) and `dialogues` at another seed with
 * twice the sessions (same planted exchanges, other filler and places);
 * each held-out style again with far more sessions, where depth matters.
 */
import { generateConversations, type ConversationFixture } from '../fixtures/conversations.js'
import { generateLongChats } from '../fixtures/long-chats.js'
import { generateDialogues } from '../fixtures/dialogues.js'
import { BUDGETS, evaluateRecall, loadFixture, type RecallReport } from '../fixtures/recall-harness.js'
import { localEmbedder } from '@engram/embed-local'
import { printRows } from './stats.js'

const pct = (x: number) => `${(x * 100).toFixed(0)}%`
const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : '—')

/** Prints the recall tables of one fixture. */
export function printRecall(name: string, r: RecallReport): void {
  printRows(
    `Recall — ${name} (${r.questions} questions)`,
    ['measurement', 'Engram', 'baseline', 'baseline is', 'ratio'],
    [
      ['search recall@5', pct(r.recallAt5), '', '', ''],
      ['search recall@10', pct(r.recallAt10), pct(r.miniRecallAt10), 'MiniSearch @10', ratio(r.recallAt10, r.miniRecallAt10)],
      ...BUDGETS.map((b) => [
        `evidence in context.build at ${b.toLocaleString('en')} tokens`,
        pct(r.inContext[b]!),
        pct(r.greedyInContext[b]!),
        'greedy fill of MiniSearch hits',
        ratio(r.inContext[b]!, r.greedyInContext[b]!),
      ]),
    ],
  )
  const kinds = Object.entries(r.byKind)
  if (kinds.length > 1)
    printRows(
      `By question kind — ${name}`,
      ['kind', 'questions', 'recall@10 (MiniSearch)', ...BUDGETS.map((b) => `in context ${b / 1000}k (greedy)`)],
      kinds.map(([kind, k]) => [
        kind,
        String(k.questions),
        `${k.recallAt10} (${k.miniRecallAt10})`,
        ...BUDGETS.map((b) => `${k.inContext[b] ?? 0} (${k.greedyInContext[b] ?? 0})`),
      ]),
    )
  if (r.missed.length > 0) console.log(`\nsearch@10 missed: ${r.missed.join(' | ')}`)
}

/**
 * The long multi-session chat sets: seed 100 is tuned on, seeds 200 and 300
 * (other names, dates, events and placement) are reported.
 */
export const LONG_CHAT_SETS = [
  ['long chats (tuning set, seed 100, 120 sessions)', () => generateLongChats(100, 120)],
  ['long chats (held out, seed 200, 200 sessions)', () => generateLongChats(200, 200)],
  ['long chats (held out, seed 300, 400 sessions)', () => generateLongChats(300, 400)],
] as const

/** Prints text-only beside hybrid with the shipped embedder, per set and per question kind. */
function printHybrid(name: string, text: RecallReport, hybrid: RecallReport, loadMs: number): void {
  printRows(
    `Hybrid with @engram/embed-local — ${name} (${text.questions} questions; loading the set and embedding its turns took ${(loadMs / 1000).toFixed(0)} s in Node)`,
    ['measurement', 'text only', 'hybrid', 'MiniSearch / greedy fill', 'hybrid ÷ baseline', 'text only ÷ baseline'],
    [
      [
        'search recall@10',
        pct(text.recallAt10),
        pct(hybrid.recallAt10),
        pct(text.miniRecallAt10),
        ratio(hybrid.recallAt10, text.miniRecallAt10),
        ratio(text.recallAt10, text.miniRecallAt10),
      ],
      ...BUDGETS.map((b) => [
        `evidence in context.build at ${b.toLocaleString('en')} tokens`,
        pct(text.inContext[b]!),
        pct(hybrid.inContext[b]!),
        pct(text.greedyInContext[b]!),
        ratio(hybrid.inContext[b]!, text.greedyInContext[b]!),
        ratio(text.inContext[b]!, text.greedyInContext[b]!),
      ]),
    ],
  )
  const kinds = Object.keys(text.byKind)
  if (kinds.length > 1)
    printRows(
      `By question kind, text only → hybrid — ${name}`,
      ['kind', 'questions', 'recall@10', 'in context 4k'],
      kinds.map((kind) => {
        const t = text.byKind[kind]!
        const h = hybrid.byKind[kind]!
        return [kind, String(t.questions), `${t.recallAt10} → ${h.recallAt10}`, `${t.inContext[4000] ?? 0} → ${h.inContext[4000] ?? 0}`]
      }),
    )
}

/**
 * Runs every fixture and prints their tables (`RECALL_SETS=long` runs the
 * long chat sets only, `RECALL_SETS=templates` the others, `RECALL_SETS=changed` the
 * changed-fact questions only). Each set runs text only, then again with the
 * shipped embedder (`RECALL_EMBEDDER=none` skips that: embedding the turns
 * takes minutes in Node).
 */
export async function runRecallBench(): Promise<void> {
  const only = process.env.RECALL_SETS
  const sets: (readonly [string, () => ConversationFixture])[] = [
    ...(only === 'templates' || only === 'changed' ? [] : LONG_CHAT_SETS),
    ...(only === 'long' || only === 'changed'
      ? []
      : ([
          ['dialogues (tuning set, seed 11, 40 sessions)', () => generateDialogues(11, 40)],
          ['conversations (held out, seed 7, 120 sessions)', () => generateConversations(7, 120)],
          ['dialogues (held out seed 23, 80 sessions)', () => generateDialogues(23, 80)],
          ['conversations (held out, seed 7, 400 sessions)', () => generateConversations(7, 400)],
          ['dialogues (held out seed 23, 300 sessions)', () => generateDialogues(23, 300)],
        ] as const)),
  ]
  const embedder = process.env.RECALL_EMBEDDER === 'none' ? undefined : localEmbedder()
  for (const [name, make] of sets) {
    const loaded = await loadFixture(make())
    const text = await evaluateRecall(loaded)
    printRecall(name, text)
    await loaded.memory.close()
    if (!embedder) continue
    const started = performance.now()
    const withVectors = await loadFixture(make(), undefined, { embedder })
    const loadMs = performance.now() - started
    const hybrid = await evaluateRecall(withVectors, { mode: 'hybrid' })
    printHybrid(name, text, hybrid, loadMs)
    await withVectors.memory.close()
    if (name !== LONG_CHAT_SETS[0][0]) continue
    // What int8 storage costs: the tuning set again with vectors kept as float32.
    const exact = await loadFixture(make(), undefined, { embedder, vectorPrecision: 'float32' })
    const f32 = await evaluateRecall(exact, { mode: 'hybrid' })
    await exact.memory.close()
    printRows(
      `int8 vectors beside float32 — ${name}, hybrid`,
      ['measurement', 'int8 (stored)', 'float32', 'difference'],
      [
        ['search recall@10', pct(hybrid.recallAt10), pct(f32.recallAt10), `${((hybrid.recallAt10 - f32.recallAt10) * 100).toFixed(1)} points`],
        ...BUDGETS.map((b) => [
          `evidence in context at ${b.toLocaleString('en')} tokens`,
          pct(hybrid.inContext[b]!),
          pct(f32.inContext[b]!),
          `${((hybrid.inContext[b]! - f32.inContext[b]!) * 100).toFixed(1)} points`,
        ]),
      ],
    )
  }
  if (only === undefined || only === 'changed') await (await import('./recall-changed-facts.js')).runChangedFactsBench()
}
