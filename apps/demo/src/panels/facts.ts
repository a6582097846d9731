import type { Fact } from '@engram/core'
import { errorField, errorText, type App } from '../app.js'
import { el, field, fieldError, formatTime, formatValue, keepFocus, parseValue, replace } from '../dom.js'
import { factHistory, historyMemory } from './fact-history.js'
import { section, serialRefresh, stateLine } from './panel.js'

/** Facts of the selected project: table with edit, delete, history, restore and an "as of" view. */
export function factsPanel(app: App): HTMLElement {
  const state = stateLine()
  const body = el('tbody')
  const valueHeader = el('th', { scope: 'col' }, 'Value')
  const table = el(
    'table',
    { class: 'facts' },
    el('caption', { class: 'visually-hidden' }, 'Facts of the selected project'),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, 'Key'),
        valueHeader,
        el('th', { scope: 'col' }, 'Tags'),
        el('th', { scope: 'col' }, 'Updated'),
        el('th', { scope: 'col', 'aria-describedby': 'fact-version-note' }, 'Local v'),
        el('th', { scope: 'col' }, 'Actions'),
      ),
    ),
    body,
  )
  /** Keys being edited in place: a refresh (e.g. a remote change) waits until they are saved or cancelled. */
  const editing = new Set<string>()
  /** Open history panels survive the re-render of their rows. */
  const histories = historyMemory()
  /** After an in-place edit, keyboard focus returns to that row's Edit button. */
  let refocus: string | undefined
  const deletedList = el('ul', { class: 'deleted', 'aria-label': 'Deleted facts' })
  const deleted = el('details', { class: 'deleted-facts' }, el('summary', {}, 'Deleted facts'), deletedList)
  const asOf = el('input', { type: 'datetime-local', step: 1 })
  asOf.addEventListener('change', () => refresh())
  const asOfControls = el(
    'div',
    { class: 'inline-form' },
    field('As of', asOf, 'Shows what memory believed at that time'),
    el(
      'button',
      {
        type: 'button',
        on: {
          click: () => {
            asOf.value = ''
            refresh()
          },
        },
      },
      'Now',
    ),
  )
  const key = el('input', { type: 'text', required: true, maxlength: 200, autocomplete: 'off' })
  const value = el('input', { type: 'text', required: true, autocomplete: 'off' })
  const tags = el('input', { type: 'text', autocomplete: 'off', placeholder: 'comma, separated' })
  const problems = { key: fieldError(key), value: fieldError(value), tags: fieldError(tags) }
  const form = el(
    'form',
    {
      class: 'inline-form',
      on: {
        submit: (e) => {
          e.preventDefault()
          void setFact()
        },
      },
    },
    field('Key', key, undefined, problems.key),
    field('Value', value, 'JSON or plain text', problems.value),
    field('Tags', tags, undefined, problems.tags),
    el('button', { type: 'submit' }, 'Set fact'),
  )

  async function setFact(): Promise<void> {
    for (const problem of Object.values(problems)) problem.clear()
    try {
      const tagList = tags.value
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '')
      await app.memory.facts.set(app.projectId, key.value.trim(), parseValue(value.value) as never, {
        tags: tagList,
        source: { note: `demo device ${app.device}` },
      })
      key.value = ''
      value.value = ''
      tags.value = ''
      key.focus()
    } catch (error) {
      problems[errorField(error, ['key', 'value', 'tags'] as const, 'value')].show(`Could not set the fact: ${errorText(error)}`)
    }
  }

  function actions(fact: Fact, row: HTMLTableRowElement): HTMLElement {
    const edit = (): void => {
      const input = el('input', { type: 'text', value: formatValue(fact.value), 'aria-label': `New value of ${fact.key}` })
      const problem = fieldError(input)
      const cell = row.cells[1]!
      const done = (): void => {
        editing.delete(fact.key)
        refocus = fact.key
        refresh()
      }
      const save = (): void => {
        app.memory.facts
          .set(app.projectId, fact.key, parseValue(input.value) as never, { tags: fact.tags, source: { note: `demo device ${app.device}` } })
          .then(done, (error: unknown) => problem.show(`Could not save: ${errorText(error)}`))
      }
      editing.add(fact.key)
      replace(
        cell,
        el(
          'form',
          {
            class: 'inline-form',
            on: {
              submit: (e) => {
                e.preventDefault()
                save()
              },
            },
          },
          input,
          el('button', { type: 'submit' }, 'Save'),
          el('button', { type: 'button', on: { click: done } }, 'Cancel'),
          problem.element,
        ),
      )
      input.addEventListener('input', () => problem.clear())
      input.addEventListener('keydown', (e) => {
        if (e.key === 'Escape') done()
      })
      input.focus()
    }
    const history = factHistory(app, fact.key, state, histories)
    return el(
      'div',
      { class: 'actions' },
      el('button', { type: 'button', 'aria-label': `Edit ${fact.key}`, on: { click: edit } }, 'Edit'),
      el(
        'button',
        {
          type: 'button',
          'aria-label': `Delete ${fact.key}`,
          on: {
            click: () => {
              app.memory.facts.delete(app.projectId, fact.key).catch((error: unknown) => state.error(error, 'delete the fact'))
            },
          },
        },
        'Delete',
      ),
      history,
    )
  }

  function factRow(fact: Fact): HTMLTableRowElement {
    const row = el(
      'tr',
      { 'data-key': fact.key },
      el('th', { scope: 'row', class: 'key' }, fact.key),
      el('td', { class: 'value' }, formatValue(fact.value)),
      el('td', { class: 'tags' }, fact.tags.join(', ')),
      el('td', { class: 'updated' }, formatTime(fact.updatedAt)),
      el('td', {}, fact.version),
    )
    row.append(el('td', {}, actions(fact, row)))
    return row
  }

  async function asOfRows(time: number): Promise<HTMLTableRowElement[]> {
    const [active, gone] = await Promise.all([app.memory.facts.list(app.projectId, { limit: 500 }), app.memory.facts.deleted(app.projectId)])
    const keys = [...new Set([...active.items, ...gone.items].map((f) => f.key))].sort()
    const values = await Promise.all(keys.map((k) => app.memory.facts.at(app.projectId, k, time)))
    return keys.flatMap((k, i) =>
      values[i] === undefined
        ? []
        : [
            el(
              'tr',
              { 'data-key': k },
              el('th', { scope: 'row', class: 'key' }, k),
              el('td', { class: 'value' }, formatValue(values[i])),
              el('td', {}, ''),
              el('td', {}, ''),
              el('td', {}, ''),
              el('td', {}, factHistory(app, k, state, histories)),
            ),
          ],
    )
  }

  const refresh = serialRefresh(async () => {
    const projectId = app.projectId
    if (editing.size > 0) return
    try {
      const time = asOf.value === '' ? undefined : new Date(asOf.value).getTime()
      valueHeader.textContent = time === undefined ? 'Value' : `Value as of ${formatTime(time)}`
      form.hidden = time !== undefined
      const rows = time === undefined ? (await app.memory.facts.list(projectId, { limit: 500 })).items.map(factRow) : await asOfRows(time)
      const { items: gone } = await app.memory.facts.deleted(projectId)
      if (projectId !== app.projectId) return
      keepFocus(body, () => replace(body, ...rows))
      if (refocus !== undefined) {
        body.querySelector<HTMLButtonElement>(`tr[data-key="${CSS.escape(refocus)}"] button`)?.focus()
        refocus = undefined
      }
      keepFocus(deletedList, () =>
        replace(
          deletedList,
          ...gone.map((f) =>
            el(
              'li',
              { 'data-key': f.key },
              el('span', { class: 'key' }, f.key),
              ' = ',
              el('span', { class: 'value' }, formatValue(f.value)),
              el('small', {}, ` deleted ${formatTime(f.deletedAt)} `),
              el(
                'button',
                {
                  type: 'button',
                  'aria-label': `Restore ${f.key}`,
                  on: {
                    click: () => {
                      app.memory.facts.restore(projectId, f.key).catch((error: unknown) => state.error(error, 'restore the fact'))
                    },
                  },
                },
                'Restore',
              ),
            ),
          ),
        ),
      )
      deleted.hidden = gone.length === 0
      table.hidden = rows.length === 0
      if (rows.length === 0)
        state.empty(
          time === undefined ? 'No facts yet. Add one below, or tell the agent "Remember that my favourite colour is teal".' : 'No facts at that time.',
        )
      else state.clear()
    } catch (error) {
      state.error(error, 'load facts')
    }
  })

  state.loading()
  refresh()
  app.onMemoryChange(['facts'], refresh)
  app.onSelect((projectChanged) => {
    if (projectChanged) {
      editing.clear()
      histories.clear()
    }
    refresh()
  })
  // Versions are the store's per-device history; sync converges values (latest stamp wins), not their numbering.
  const versionNote = el(
    'p',
    { class: 'note', id: 'fact-version-note' },
    'Local v: how many versions of the key this device has stored, synced edits included. Each device numbers its own history, so devices can show different numbers for the same value.',
  )
  return section('facts', 'Facts', asOfControls, state.element, table, versionNote, deleted, form)
}
