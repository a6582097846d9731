import { engramMiddleware } from '@engram/ai-sdk'
import type { Context, Memory, Message } from '@engram/core'
import { generateText, wrapLanguageModel } from 'ai'
import { scriptedModel } from '../agent/scripted-model.js'
import type { App } from '../app.js'
import { count, el, field, replace } from '../dom.js'
import { section, serialRefresh, stateLine } from './panel.js'

/** Token budget of the context each turn would send. */
const turnBudget = 400

/**
 * Chat with the scripted agent, the way an app calls a real model: each
 * message is `generateText` on a model wrapped with `engramMiddleware`, which
 * runs `turns.begin` (the context goes into the prompt) and, after the reply,
 * `turns.end` (records the exchange and queues it; `aiExtractor`, on a scripted
 * model in this page, turns "remember that …" / "forget …" into fact writes the
 * worker applies).
 */
export function chatPanel(app: App): HTMLElement {
  const state = stateLine()
  const transcript = el('ol', { class: 'transcript', 'aria-label': 'Conversation', 'aria-live': 'polite' })
  const input = el('textarea', { rows: 2, required: true, placeholder: 'Remember that my favourite colour is teal.' })
  const send = el('button', { type: 'submit' }, 'Send')
  const notes = new Map<number, string>()
  const form = el(
    'form',
    {
      class: 'chat-form',
      on: {
        submit: (e) => {
          e.preventDefault()
          void turn()
        },
      },
    },
    field('Message', input, 'Enter sends, Shift+Enter adds a line'),
    send,
  )
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault()
      form.requestSubmit()
    }
  })

  async function chatSession(): Promise<string> {
    const current = app.sessionId ? await app.memory.sessions.get(app.sessionId) : undefined
    if (current?.status === 'active' && current.projectId === app.projectId) return current.id
    const session = await app.memory.sessions.create(app.projectId, { title: `Chat on device ${app.device}`, channel: 'demo' })
    app.select({ sessionId: session.id })
    return session.id
  }

  async function turn(): Promise<void> {
    const prompt = input.value.trim()
    if (prompt === '') return
    send.disabled = true
    input.setAttribute('aria-busy', 'true')
    state.clear()
    try {
      const projectId = app.projectId
      const sessionId = await chatSession()
      const turn: { context?: Context; written: number; turnId?: string; jobId?: number; failure?: unknown } = { written: 0 }
      const startedAt = Date.now()
      const middleware = engramMiddleware(app.memory, {
        projectId,
        sessionId,
        budget: turnBudget,
        onBegin: ({ context }) => {
          turn.context = context
        },
        onEnd: ({ turnId, result }) => {
          turn.written = result.written
          turn.turnId = turnId
          if (result.jobId !== undefined) turn.jobId = result.jobId
        },
        onError: (error) => {
          turn.failure = error
        },
      })
      const facts = async () => (await app.memory.facts.list(projectId, { limit: 200 })).items
      const model = wrapLanguageModel({ model: scriptedModel({ context: () => turn.context, facts }), middleware })
      await generateText({ model, prompt, maxRetries: 0 })
      if (turn.failure !== undefined) throw turn.failure
      // The extractor ran in the background (aiExtractor): wait for its writes to count them.
      if (turn.jobId !== undefined) turn.written = await extractedWrites(app.memory, sessionId, turn.turnId, startedAt)
      const { context, written } = turn
      if (context) app.preview(context, turnBudget, `Turn context for "${prompt.slice(0, 60)}"`)
      input.value = ''
      const tail = await app.memory.messages.tail(sessionId, 1)
      const last = tail[tail.length - 1]
      if (last !== undefined) notes.set(last.seq, `context ${context?.tokens ?? 0}/${count(turnBudget, 'token')} · ${count(written, 'memory write')}`)
      refresh()
    } catch (error) {
      state.error(error, 'run the turn')
    } finally {
      send.disabled = false
      input.removeAttribute('aria-busy')
      input.focus()
    }
  }

  function bubble(message: Message): HTMLElement {
    const note = notes.get(message.seq)
    return el(
      'li',
      { class: `message role-${message.role}`, 'data-seq': message.seq },
      el('strong', { class: 'who' }, message.role === 'user' ? 'You' : message.role === 'assistant' ? 'Agent' : message.role),
      el('p', {}, message.content),
      note ? el('small', { class: 'turn-note' }, note) : null,
    )
  }

  const refresh = serialRefresh(async () => {
    try {
      if (app.sessionId === undefined) {
        const [latest] = (await app.memory.sessions.list(app.projectId, { status: 'active', limit: 1 })).items
        if (latest !== undefined) {
          app.select({ sessionId: latest.id })
          return
        }
      }
      const sessionId = app.sessionId
      const messages = sessionId ? await app.memory.messages.tail(sessionId, 50) : []
      if (sessionId !== app.sessionId) return
      replace(transcript, ...messages.map(bubble))
      if (messages.length === 0) state.empty('Say something to the agent. Try "Remember that my favourite colour is teal."')
      else if (!send.disabled) state.clear()
      transcript.lastElementChild?.scrollIntoView({ block: 'nearest' })
    } catch (error) {
      state.error(error, 'load the conversation')
    }
  })

  refresh()
  // Chats of projects that sync them arrive from the other device as sessions and messages.
  app.onMemoryChange(['messages', 'sessions'], refresh)
  app.onSelect(refresh)
  return section('chat', 'Chat with the scripted agent', state.element, transcript, form)
}

/** How many memory writes the background extraction of a turn made (its journal's `turn.extracted`). */
async function extractedWrites(memory: Memory, sessionId: string, turnId: string | undefined, since: number): Promise<number> {
  await memory.extraction.flush()
  const page = await memory.journal.page(sessionId, { since, limit: 1_000 })
  const record = page.items.find((r) => r.kind === 'turn.extracted' && ((r.payload as { turns?: string[] }).turns ?? []).includes(turnId ?? ''))
  return (record?.payload as { operations?: number } | undefined)?.operations ?? 0
}
