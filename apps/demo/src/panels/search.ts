import { englishAnalyzer, type Hit, type HitKind } from '@engram/core'
import type { App } from '../app.js'
import { count, el, field, formatTime, replace } from '../dom.js'
import { section, stateLine } from './panel.js'

/** Every kind search returns, with its label (a kind core adds fails to compile here until it is listed). */
const KIND_LABELS: Record<HitKind, string> = {
  fact: 'fact',
  message: 'message',
  summary: 'summary',
  passage: 'passage',
  observation: 'observation',
  entity: 'entity',
  relation: 'relation',
}
const kinds = Object.keys(KIND_LABELS) as HitKind[]

/** Full-text (or hybrid) search over the selected project, hits grouped by kind. */
export function searchPanel(app: App): HTMLElement {
  const state = stateLine()
  const query = el('input', { type: 'search', required: true, autocomplete: 'off' })
  const boxes = kinds.map((kind) => el('input', { type: 'checkbox', checked: true, value: kind }))
  const results = el('div', { class: 'results' })
  const form = el(
    'form',
    {
      class: 'inline-form',
      role: 'search',
      on: {
        submit: (e) => {
          e.preventDefault()
          void run()
        },
      },
    },
    field('Search memory', query),
    el('fieldset', { class: 'kinds' }, el('legend', {}, 'Kinds'), ...boxes.map((box, i) => el('label', {}, box, ` ${KIND_LABELS[kinds[i]!]}`))),
    el('button', { type: 'submit' }, 'Search'),
  )

  async function run(): Promise<void> {
    const text = query.value.trim()
    if (text === '') return
    const chosen = boxes.filter((b) => b.checked).map((b) => b.value as HitKind)
    state.loading()
    try {
      const hits = await app.memory.search(app.projectId, text, { kinds: chosen, limit: 20 })
      const groups = kinds.map((kind) => [kind, hits.filter((h) => h.kind === kind)] as const).filter(([, list]) => list.length > 0)
      const terms = new Set(englishAnalyzer.terms(text))
      replace(
        results,
        ...groups.map(([kind, list]) =>
          el(
            'section',
            { class: 'hit-group', 'data-kind': kind },
            el('h3', {}, `${kind}: ${count(list.length, 'hit')}`),
            el('ol', {}, ...list.map((hit) => hitItem(hit, terms))),
          ),
        ),
      )
      if (hits.length === 0) state.empty(`No hits for "${text}".`)
      else state.clear()
    } catch (error) {
      state.error(error, 'search')
    }
  }

  app.onSelect((projectChanged) => {
    if (projectChanged) {
      replace(results)
      state.clear()
    }
  })
  return section('search', 'Search', form, state.element, results)
}

/**
 * One hit. Search ranks the turns next to the best message hits too (the answer often sits in
 * the reply); a turn without any of the query's terms is there as such context, and says so.
 */
function hitItem(hit: Hit, terms: ReadonlySet<string>): HTMLElement {
  const context = hit.kind === 'message' && !englishAnalyzer.terms(hit.text).some((t) => terms.has(t))
  return el(
    'li',
    { class: context ? 'hit hit-context' : 'hit' },
    context ? el('small', { class: 'badge' }, 'context') : null,
    el('p', {}, hit.text),
    el('small', {}, `${context ? 'a turn next to a match · ' : ''}score ${hit.score.toFixed(3)} · ${formatTime(hit.createdAt)}`),
  )
}
