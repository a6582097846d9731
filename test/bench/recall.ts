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

/**
 * Runs every fixture and prints their tables (`RECALL_SETS=long` runs the
 * long chat sets only, `RECALL_SETS=templates` the others).
 */
export async function runRecallBench(): Promise<void> {
  const only = process.env.RECALL_SETS
  const sets: (readonly [string, () => ConversationFixture])[] = [
    ...(only === 'templates' ? [] : LONG_CHAT_SETS),
    ...(only === 'long'
      ? []
      : ([
          ['dialogues (tuning set, seed 11, 40 sessions)', () => generateDialogues(11, 40)],
          ['conversations (held out, seed 7, 120 sessions)', () => generateConversations(7, 120)],
          ['dialogues (held out seed 23, 80 sessions)', () => generateDialogues(23, 80)],
          ['conversations (held out, seed 7, 400 sessions)', () => generateConversations(7, 400)],
          ['dialogues (held out seed 23, 300 sessions)', () => generateDialogues(23, 300)],
        ] as const)),
  ]
  for (const [name, make] of sets) {
    const loaded = await loadFixture(make())
    printRecall(name, await evaluateRecall(loaded))
    await loaded.memory.close()
  }
}
