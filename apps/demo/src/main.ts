import './zod-config.js'
import { USER_PROJECT, type ChangeKind } from '@engram/core'
import { errorText, type App } from './app.js'
import { loadConfig, openDemoMemory, type DemoMemory } from './connect.js'
import { el, replace } from './dom.js'
import { header } from './header.js'
import { blocksPanel } from './panels/blocks.js'
import { chatPanel } from './panels/chat.js'
import { contextPreview } from './panels/context-preview.js'
import { factsPanel } from './panels/facts.js'
import { knowledgePanel } from './panels/knowledge.js'
import { projectsPanel } from './panels/projects.js'
import { searchPanel } from './panels/search.js'
import { sessionsPanel } from './panels/sessions.js'
import { storagePanel } from './panels/storage.js'
import { syncStatusOf } from './sync-status.js'

const root = document.getElementById('app')!
const params = new URLSearchParams(location.search)
const device = /^[\w-]{1,16}$/.test(params.get('device') ?? '') ? params.get('device')! : 'A'
const userId = /^[\w.-]{1,64}$/.test(params.get('user') ?? '') ? params.get('user')! : 'demo-user'
document.title = `Engram demo — device ${device}`

async function start(): Promise<void> {
  const config = await loadConfig()
  const memory = await openDemoMemory(userId, device, config)
  // First run on this device with a relay: share the user's own memory right away.
  const autoSyncKey = `engram-demo:auto-sync:${userId}`
  if (config.relayUrl && localStorage.getItem(autoSyncKey) === null) {
    const project = await memory.projects.get(USER_PROJECT)
    if (project && !project.sync.enabled) await memory.projects.update(USER_PROJECT, { sync: { enabled: true } })
    localStorage.setItem(autoSyncKey, '1')
  }

  const selectListeners = new Set<(projectChanged: boolean) => void>()
  const changeListeners: { kinds: ChangeKind[]; listener: () => void; timer?: ReturnType<typeof setTimeout> }[] = []
  const alert = el('div', { class: 'global-alert', role: 'alert' })
  alert.hidden = true
  let preview: ((...args: Parameters<App['preview']>) => void) | undefined

  const app: App = {
    memory,
    userId,
    device,
    sync: syncStatusOf(memory),
    projectId: USER_PROJECT,
    sessionId: undefined,
    onSelect(listener) {
      selectListeners.add(listener)
      return () => selectListeners.delete(listener)
    },
    select(selection) {
      const projectChanged = selection.projectId !== undefined && selection.projectId !== app.projectId
      if (selection.projectId !== undefined) app.projectId = selection.projectId
      if ('sessionId' in selection) app.sessionId = selection.sessionId
      for (const listener of selectListeners) listener(projectChanged)
    },
    onMemoryChange(kinds, listener) {
      changeListeners.push({ kinds, listener })
    },
    report(error, action) {
      alert.hidden = false
      replace(
        alert,
        `Could not ${action}: ${errorText(error)}`,
        el(
          'button',
          {
            type: 'button',
            'aria-label': 'Dismiss error',
            on: {
              click: () => {
                alert.hidden = true
              },
            },
          },
          '×',
        ),
      )
    },
    preview: (context, budget, label) => preview?.(context, budget, label),
  }

  await memory.changes.subscribe({}, (batch) => {
    for (const entry of changeListeners) {
      const relevant = batch.some((c) => entry.kinds.includes(c.kind) && (c.kind === 'projects' || c.projectId === app.projectId))
      if (!relevant || entry.timer !== undefined) continue
      // Coalesce a burst of batches (e.g. a sync catch-up) into one refresh.
      entry.timer = setTimeout(() => {
        entry.timer = undefined
        entry.listener()
      }, 30)
    }
  })

  const context = contextPreview(app)
  preview = context.show
  root.removeAttribute('aria-busy')
  replace(
    root,
    header(app),
    alert,
    el(
      'main',
      { class: 'layout' },
      el('div', { class: 'column side' }, projectsPanel(app), chatPanel(app)),
      el(
        'div',
        { class: 'column inspector', id: 'inspector', 'aria-label': 'Memory inspector', role: 'region' },
        factsPanel(app),
        blocksPanel(app),
        knowledgePanel(app),
        context.element,
        searchPanel(app),
        sessionsPanel(app),
        storagePanel(app),
      ),
    ),
  )
  opened = memory
  // Leaving the page (also into the back/forward cache) closes the memory: the worker lets go of the
  // database and the sync socket, so the page is allowed into the bfcache and holds nothing other tabs need.
  window.addEventListener('pagehide', () => memory.close())
}

/** The memory of this page, once open (see the `pageshow` handler). */
let opened: DemoMemory | undefined
// A page restored from the back/forward cache (`persisted`) holds the memory pagehide closed: every call
// would fail with `closed`. Reload: the page reopens its memory (it is all local) and reconnects sync.
window.addEventListener('pageshow', (event) => {
  if (event.persisted && (opened === undefined || opened.closed)) location.reload()
})

start().catch((error: unknown) => {
  root.removeAttribute('aria-busy')
  replace(
    root,
    el(
      'div',
      { class: 'fatal', role: 'alert' },
      el('h1', {}, 'Engram demo could not start'),
      el('p', {}, errorText(error)),
      el('p', {}, 'Is IndexedDB available (not a private window with storage disabled)? Reload to try again.'),
      el('button', { type: 'button', on: { click: () => location.reload() } }, 'Reload'),
    ),
  )
})
