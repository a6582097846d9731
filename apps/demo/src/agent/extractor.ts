import type { Exchange, MemoryOperation } from '@engram/core'
import { parseIntent, sentences } from './intent.js'

/**
 * The demo's rule-based extractor for `turns.end`: "remember that X is Y"
 * becomes `fact.set X = Y`, "forget X" becomes `fact.delete X`, "Dana works at
 * Acme" relates Dana to Acme (`entity.upsert`, `relation.add`), in the turn's
 * project. No model call: memory visibly grows from plain sentences.
 *
 * @example
 * extractMemory({ prompt: 'Remember that my favourite colour is teal.', … })
 * // → [{ op: 'fact.set', key: 'favourite_colour', value: 'teal', … }]
 */
export function extractMemory(exchange: Pick<Exchange, 'prompt'>): MemoryOperation[] {
  const operations: MemoryOperation[] = []
  for (const sentence of sentences(exchange.prompt)) {
    const intent = parseIntent(sentence)
    if (intent.kind === 'remember') {
      operations.push({ op: 'fact.set', key: intent.key, value: intent.value, confidence: 0.9, tags: ['chat'] })
    } else if (intent.kind === 'forget') {
      operations.push({ op: 'fact.delete', key: intent.key })
    } else if (intent.kind === 'relate') {
      operations.push(
        { op: 'entity.upsert', name: intent.subject, type: 'person' },
        { op: 'relation.add', subject: intent.subject, predicate: intent.predicate, object: intent.object, objectType: intent.objectType },
      )
    }
  }
  return operations
}
