import type { Project } from '@engram/core'
import type { App } from '../app.js'
import { el, field, keepFocus, replace } from '../dom.js'
import { statusText, type SyncStatus } from '../sync-status.js'
import { section, serialRefresh, stateLine } from './panel.js'

/** Projects: pick one, create, rename, turn sync on/off with a live status badge. */
export function projectsPanel(app: App): HTMLElement {
  const list = el('ul', { class: 'project-list', 'aria-label': 'Projects' })
  const state = stateLine()
  const badges = new Map<string, HTMLElement>()
  const name = el('input', { type: 'text', required: true, maxlength: 200, autocomplete: 'off' })
  const id = el('input', { type: 'text', maxlength: 100, autocomplete: 'off', pattern: '[A-Za-z0-9_.\\-]+' })
  const create = el(
    'form',
    {
      class: 'inline-form',
      on: {
        submit: (e) => {
          e.preventDefault()
          void createProject()
        },
      },
    },
    field('New project', name),
    field('Id (optional)', id, 'Use the same id on your other device to share it'),
    el('button', { type: 'submit' }, 'Create'),
  )

  async function createProject(): Promise<void> {
    const text = name.value.trim()
    if (text === '') return name.focus()
    try {
      const chosen = id.value.trim()
      const project = await app.memory.projects.create({ name: text, sync: { enabled: true }, ...(chosen !== '' ? { id: chosen } : {}) })
      name.value = ''
      id.value = ''
      app.select({ projectId: project.id, sessionId: undefined })
    } catch (error) {
      state.error(error, 'create the project')
    }
  }

  function setBadge(projectId: string, status: SyncStatus): void {
    const badge = badges.get(projectId)
    if (badge === undefined) return
    badge.className = `badge badge-${status}`
    badge.textContent = statusText[status]
  }

  function row(project: Project): HTMLElement {
    const current = project.id === app.projectId
    const rename = el('input', { type: 'text', value: project.name, maxlength: 200, 'aria-label': `Name of project ${project.name}` })
    const toggle = el('input', { type: 'checkbox', checked: project.sync.enabled, 'aria-label': `Sync project ${project.name}` })
    const badge = el('span', { class: 'badge', 'data-project': project.id, 'aria-live': 'polite' })
    badges.set(project.id, badge)
    setBadge(project.id, project.sync.enabled ? 'connecting' : 'off')
    void app.sync.status(project.id).then(
      (s) => setBadge(project.id, s),
      () => setBadge(project.id, 'error'),
    )
    toggle.addEventListener('change', () => {
      app.memory.projects.update(project.id, { sync: { enabled: toggle.checked } }).catch((error: unknown) => {
        toggle.checked = !toggle.checked
        state.error(error, 'change sync')
      })
    })
    // Opt-in: the project's chats follow the user to the other device too.
    const chats = el('input', { type: 'checkbox', checked: project.sync.messages === true, 'aria-label': `Sync chats of project ${project.name}` })
    chats.addEventListener('change', () => {
      app.memory.projects.setSync(project.id, { messages: chats.checked }).catch((error: unknown) => {
        chats.checked = !chats.checked
        state.error(error, 'change chat sync')
      })
    })
    const save = (): void => {
      const next = rename.value.trim()
      if (next === '' || next === project.name) return
      app.memory.projects.update(project.id, { name: next }).catch((error: unknown) => state.error(error, 'rename the project'))
    }
    return el(
      'li',
      { class: current ? 'project current' : 'project', 'data-project': project.id, 'data-key': project.id },
      el(
        'button',
        {
          type: 'button',
          class: 'project-open',
          'aria-pressed': String(current),
          on: { click: () => app.select({ projectId: project.id, sessionId: undefined }) },
        },
        project.name,
        el('small', {}, ` (${project.id})`),
      ),
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
        rename,
        el('button', { type: 'submit', 'aria-label': `Rename project ${project.name}` }, 'Rename'),
      ),
      el('label', { class: 'toggle' }, toggle, ' Sync'),
      el('label', { class: 'toggle', title: 'Sessions and messages sync too (stored by the relay)' }, chats, ' Sync chats'),
      badge,
    )
  }

  const refresh = serialRefresh(async () => {
    try {
      const projects = await app.memory.projects.list({})
      badges.clear()
      keepFocus(list, () => replace(list, ...projects.map(row)))
      if (projects.length === 0) state.empty('No projects yet.')
      else state.clear()
    } catch (error) {
      state.error(error, 'list projects')
    }
  })

  state.loading()
  refresh()
  app.onMemoryChange(['projects'], refresh)
  app.onSelect(refresh)
  app.sync.onStatus((projectId, status) => setBadge(projectId, status))
  return section('projects', 'Projects', state.element, list, create)
}
