import type { Context, Fact } from '@engram/core'
import { count, formatValue } from '../dom.js'
import { parseIntent, sentences, type Intent } from './intent.js'
import { secondPerson } from './second-person.js'

/** What the scripted agent sees: the prompt, the context turns.begin built, and the project's facts. */
export interface AgentInput {
  prompt: string
  context: Context
  facts: Fact[]
}

/**
 * A stand-in for an LLM: answers from rules and from memory, so the demo needs
 * no model. It reads facts the way a real agent would read its context.
 */
export function scriptedReply(input: AgentInput): string {
  const parts = sentences(input.prompt).map((s) => answer(parseIntent(s), input))
  const useful = parts.filter((p) => p !== '').map((p) => p.charAt(0).toUpperCase() + p.slice(1))
  if (useful.length > 0) return useful.join(' ')
  const sections = input.context.sections.filter((s) => s.items > 0).map((s) => `${s.name} (${s.items})`)
  return (
    `I'm a scripted agent, not a model. A real one would get ${count(input.context.tokens, 'token')} of context` +
    (sections.length > 0 ? ` from ${sections.join(', ')}` : ' (memory is empty so far)') +
    '. Try "Remember that my favourite colour is teal", "What is my favourite colour?", "Forget my favourite colour" or "Dana works at Acme".'
  )
}

function answer(intent: Intent, input: AgentInput): string {
  const fact = (key: string): Fact | undefined => input.facts.find((f) => f.key === key)
  // The user says "my favourite colour"; the agent answers about "your favourite colour".
  const subject = 'subject' in intent ? secondPerson(intent.subject) : ''
  switch (intent.kind) {
    case 'remember':
      return intent.subject === 'a note' ? 'Noted — I will remember that.' : `Noted: ${subject} is ${formatValue(intent.value)}.`
    case 'forget':
      return fact(intent.key) ? `Okay, I have forgotten ${subject}.` : `I had nothing stored about ${subject}.`
    case 'ask': {
      const found = fact(intent.key)
      return found
        ? `${subject} is ${formatValue(found.value)} (fact "${found.key}").`
        : `I don't know ${subject} yet. Tell me: "Remember that ${intent.subject} is …".`
    }
    case 'list':
      return input.facts.length === 0
        ? 'I remember nothing about you in this project yet.'
        : `I remember: ${input.facts
            .slice(0, 10)
            .map((f) => `${f.key} = ${formatValue(f.value)}`)
            .join('; ')}${input.facts.length > 10 ? ' …' : ''}.`
    case 'relate':
      return `Noted: ${intent.subject} ${intent.predicate === 'works_at' ? 'works at' : 'lives in'} ${intent.object} (see the knowledge panel).`
    case 'chat':
      return ''
  }
}
