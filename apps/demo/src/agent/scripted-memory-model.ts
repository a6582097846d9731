import type { wrapLanguageModel } from 'ai'
import { parseIntent, sentences } from './intent.js'

/** A language model as the AI SDK takes it. */
type LanguageModel = Parameters<typeof wrapLanguageModel>[0]['model']
type CallOptions = Parameters<Extract<LanguageModel, { specificationVersion: 'v3' }>['doGenerate']>[0]

/** The prompt text is escaped memory text (the context builder's escaping): back to what the user typed. */
const unescapeEntities = (text: string) => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

/** The user lines of an extraction prompt's `<exchange>`, or of an observer's `<messages>`. */
function userLines(prompt: string): string[] {
  return prompt.split('\n').flatMap((line) => {
    const m = /^(?:\[[^\]]*\] )?user: (.*)$/.exec(line)
    return m?.[1] ? [unescapeEntities(m[1])] : []
  })
}

/** The name of an entity the prompt's memory lists that `name` names (case ignored), if any. */
function knownName(prompt: string, name: string): string | undefined {
  const memory = prompt.slice(0, Math.max(0, prompt.indexOf('<exchange>')))
  const at = memory.indexOf('\nentities:\n')
  if (at < 0) return undefined
  for (const line of memory.slice(at).split('\n')) {
    const listed = /^- (.+?) \(/.exec(line)?.[1]
    if (listed && unescapeEntities(listed).toLowerCase() === name.toLowerCase()) return unescapeEntities(listed)
  }
  return undefined
}

/** What the scripted memory model answers: the demo's sentence rules as extraction operations, or observations. */
function answer(system: string, prompt: string): unknown {
  if (system.startsWith('You compress'))
    return {
      observations: userLines(prompt)
        .slice(-3)
        .map((text) => ({ text: `The user said: ${text.slice(0, 200)}`, priority: 'medium' })),
    }
  if (system.startsWith('You condense')) return { observations: [{ text: 'The user talked with the agent about what to remember.', priority: 'low' }] }
  const operations = []
  for (const line of userLines(prompt.slice(prompt.indexOf('<exchange>')))) {
    for (const sentence of sentences(line)) {
      const intent = parseIntent(sentence)
      if (intent.kind === 'remember')
        operations.push({ type: 'add_fact', key: intent.key, value: intent.value, confidence: 0.9, tags: ['chat'], reason: 'the user asked to remember it' })
      else if (intent.kind === 'forget') operations.push({ type: 'delete_fact', key: intent.key, reason: 'the user asked to forget it' })
      else if (intent.kind === 'relate') {
        // The subject by the name the prompt listed when it is already known, so the model reuses it.
        const subject = knownName(prompt, intent.subject) ?? intent.subject
        operations.push(
          { type: 'upsert_entity', name: subject, entity_type: 'person', reason: 'the user talks about them' },
          {
            type: 'add_relation',
            subject,
            predicate: intent.predicate,
            object: knownName(prompt, intent.object) ?? intent.object,
            object_type: intent.objectType,
            reason: `the user said where ${subject} ${intent.predicate === 'works_at' ? 'works' : 'lives'}`,
          },
        )
      }
    }
  }
  return { operations }
}

/**
 * The demo's stand-in for the model `aiExtractor` calls after each turn, in the AI SDK's language
 * model spec: it reads the extraction prompt (the exchange, escaped) and answers with the demo's
 * sentence rules — "remember that X is Y" adds a fact, "forget X" deletes it, "Dana works at Acme"
 * relates two entities (a later "Dana now works at Initech" closes the first) — as the structured
 * JSON a real model returns. An app passes its real model instead; nothing else changes.
 */
export function scriptedMemoryModel(): LanguageModel {
  return {
    specificationVersion: 'v3',
    provider: 'engram-demo',
    modelId: 'scripted-memory',
    supportedUrls: {},
    async doGenerate(options: CallOptions) {
      const system = options.prompt.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n')
      const prompt = options.prompt.flatMap((m) => (m.role === 'user' ? m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])) : [])).join('\n')
      const text = JSON.stringify(answer(system, prompt))
      const tokens = (t: string) => Math.ceil(t.length / 4)
      return {
        content: [{ type: 'text', text }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: tokens(system) + tokens(prompt), noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: tokens(text), text: undefined, reasoning: undefined },
        },
        warnings: [],
      }
    },
    async doStream() {
      throw new Error('The scripted memory model answers with generateText only')
    },
  }
}
