import type { Context } from '@engram/core'
import type { App } from '../app.js'
import { count, el, field, replace } from '../dom.js'
import { section, stateLine } from './panel.js'

/** The context preview panel and the hook the chat uses to show a turn's context. */
export interface ContextPreview {
  readonly element: HTMLElement
  show(context: Context, budget: number, label: string): void
}

/** What `context.build` would send for a prompt: a bar per section (tokens against the budget) and what was omitted. */
export function contextPreview(app: App): ContextPreview {
  const state = stateLine()
  const prompt = el('input', { type: 'text', autocomplete: 'off', placeholder: 'what is my favourite colour?' })
  const budget = el('input', { type: 'number', min: 1, max: 200000, value: '400' })
  const output = el('div', { class: 'context-output', 'aria-live': 'polite' })
  const promptField = field('Prompt', prompt)
  promptField.classList.add('wide')
  const form = el(
    'form',
    {
      class: 'inline-form',
      on: {
        submit: (e) => {
          e.preventDefault()
          void build()
        },
      },
    },
    promptField,
    field('Budget (tokens)', budget),
    el('button', { type: 'submit' }, 'Preview context'),
  )

  async function build(): Promise<void> {
    state.loading()
    try {
      const limit = Number(budget.value)
      const text = prompt.value.trim()
      const context = await app.memory.context.build(app.projectId, {
        budget: limit,
        ...(app.sessionId ? { sessionId: app.sessionId } : {}),
        ...(text !== '' ? { query: text } : {}),
      })
      state.clear()
      show(context, limit, text === '' ? 'Preview (no prompt)' : `Preview for "${text}"`)
    } catch (error) {
      state.error(error, 'build the context')
    }
  }

  function show(context: Context, limit: number, label: string): void {
    replace(
      output,
      el('p', { class: 'context-total' }, `${label}: ${context.tokens} of ${count(limit, 'token')}`),
      el('meter', { class: 'total', min: 0, max: limit, value: String(context.tokens), 'aria-label': `Total: ${context.tokens} of ${count(limit, 'token')}` }),
      el(
        'ul',
        { class: 'sections', 'aria-label': 'Sections' },
        ...context.sections.map((s) =>
          el(
            'li',
            { class: 'context-section', 'data-section': s.name },
            el('div', { class: 'section-head' }, el('strong', {}, s.name), el('small', {}, ` ${count(s.tokens, 'token')} · ${count(s.items, 'item')}`)),
            el('meter', { min: 0, max: limit, value: String(s.tokens), 'aria-label': `${s.name}: ${s.tokens} of ${count(limit, 'token')}` }),
            el('details', {}, el('summary', {}, 'Text'), el('pre', {}, s.text)),
          ),
        ),
      ),
      context.sections.length === 0 ? el('p', { class: 'state-empty' }, 'Nothing in memory fits yet: the context is empty.') : null,
      context.omitted.length > 0
        ? el(
            'div',
            { class: 'omitted' },
            el('h3', {}, 'Omitted'),
            el('ul', {}, ...context.omitted.map((o) => el('li', { 'data-section': o.name }, `${o.name}: ${count(o.items, 'item')} — ${o.reason}`))),
          )
        : el('p', { class: 'omitted-none' }, 'Nothing omitted.'),
    )
  }

  app.onSelect((projectChanged) => {
    if (projectChanged) replace(output)
  })
  return { element: section('context', 'Context preview', form, state.element, output), show }
}
