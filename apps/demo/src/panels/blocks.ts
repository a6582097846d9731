import type { Block } from '@engram/core'
import { errorField, errorText, type App } from '../app.js'
import { el, field, fieldError, formatTime, keepFocus, replace } from '../dom.js'
import { section, serialRefresh, stateLine } from './panel.js'

/** Core blocks of the selected project: an editor per block with a meter against its limit. */
export function blocksPanel(app: App): HTMLElement {
  const state = stateLine()
  const list = el('div', { class: 'blocks' })
  /** Labels of blocks with edits not saved yet. */
  const unsaved = new Set<string>()
  const label = el('input', { type: 'text', required: true, maxlength: 100, autocomplete: 'off', placeholder: 'persona' })
  const limit = el('input', { type: 'number', min: 1, max: 100000, value: '500' })
  const problems = { label: fieldError(label), limit: fieldError(limit) }
  const form = el(
    'form',
    {
      class: 'inline-form',
      on: {
        submit: (e) => {
          e.preventDefault()
          void create()
        },
      },
    },
    field('Block label', label, undefined, problems.label),
    field('Limit (characters)', limit, undefined, problems.limit),
    el('button', { type: 'submit' }, 'Add block'),
  )

  async function create(): Promise<void> {
    problems.label.clear()
    problems.limit.clear()
    try {
      await app.memory.blocks.set(app.projectId, label.value.trim(), '', { limit: Number(limit.value) })
      label.value = ''
    } catch (error) {
      problems[errorField(error, ['label', 'limit'] as const, 'label')].show(`Could not add the block: ${errorText(error)}`)
    }
  }

  function editor(block: Block): HTMLElement {
    const text = el('textarea', { rows: 3, readonly: block.readOnly, value: block.value })
    const meter = el('meter', {
      min: 0,
      max: block.limit,
      low: Math.floor(block.limit * 0.75),
      high: Math.floor(block.limit * 0.9),
      optimum: 0,
      value: String(block.value.length),
    })
    const count = el('small', { class: 'count' })
    const problem = fieldError(text)
    const measure = (): void => {
      meter.value = text.value.length
      count.textContent = `${text.value.length} / ${block.limit} characters`
      count.classList.toggle('over', text.value.length > block.limit)
    }
    text.addEventListener('input', () => {
      measure()
      if (text.value === block.value) unsaved.delete(block.label)
      else unsaved.add(block.label)
    })
    measure()
    meter.setAttribute('aria-label', `${block.label}: characters used of ${block.limit}`)
    const save = (): void => {
      const value = text.value
      app.memory.blocks
        .set(app.projectId, block.label, value, {
          limit: block.limit,
          readOnly: block.readOnly,
          ...(block.description ? { description: block.description } : {}),
        })
        .then(
          () => {
            unsaved.delete(block.label)
            problem.clear()
            refresh()
          },
          (error: unknown) => problem.show(`Could not save: ${errorText(error)}`),
        )
    }
    return el(
      'form',
      {
        class: 'block',
        'data-label': block.label,
        'data-key': block.label,
        on: {
          submit: (e) => {
            e.preventDefault()
            save()
          },
        },
      },
      field(block.readOnly ? `${block.label} (read-only)` : block.label, text, block.description, problem),
      el('div', { class: 'meter-row' }, meter, count, el('small', {}, ` · updated ${formatTime(block.updatedAt)}`)),
      el(
        'div',
        { class: 'actions' },
        el('button', { type: 'submit', disabled: block.readOnly }, 'Save'),
        el(
          'button',
          {
            type: 'button',
            'aria-label': `Delete block ${block.label}`,
            on: {
              click: () => {
                app.memory.blocks.delete(app.projectId, block.label).catch((error: unknown) => state.error(error, 'delete the block'))
              },
            },
          },
          'Delete',
        ),
      ),
    )
  }

  const refresh = serialRefresh(async () => {
    const projectId = app.projectId
    try {
      const blocks = await app.memory.blocks.list(projectId)
      if (projectId !== app.projectId) return
      // A remote change must not eat unsaved text: wait until it is saved or reverted.
      if (unsaved.size > 0) return
      keepFocus(list, () => replace(list, ...blocks.map(editor)))
      if (blocks.length === 0) state.empty('No core blocks yet. Add one (e.g. "persona") below.')
      else state.clear()
    } catch (error) {
      state.error(error, 'load blocks')
    }
  })

  state.loading()
  refresh()
  app.onMemoryChange(['blocks'], refresh)
  app.onSelect((projectChanged) => {
    if (projectChanged) unsaved.clear()
    refresh()
  })
  return section('blocks', 'Core blocks', state.element, list, form)
}
