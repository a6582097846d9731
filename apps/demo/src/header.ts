import type { MemoryStatus } from '@engram/core'
import type { App } from './app.js'
import { backgroundProblems, backgroundWarnings } from './background-status.js'
import { el } from './dom.js'
import { statusText, type SyncStatus } from './sync-status.js'

/** Title, device and user, network state, the selected project's sync badge and any failing background part. */
export function header(app: App): HTMLElement {
  const network = el('span', { class: 'badge', role: 'status' })
  const showNetwork = (): void => {
    network.className = navigator.onLine ? 'badge badge-online' : 'badge badge-offline'
    network.textContent = navigator.onLine ? 'online' : 'offline — working locally; changes sync when back'
  }
  window.addEventListener('online', showNetwork)
  window.addEventListener('offline', showNetwork)
  showNetwork()

  const project = el('span', { class: 'current-project' })
  const sync = el('span', { class: 'badge', 'aria-live': 'polite', id: 'current-sync' })
  const setSync = (status: SyncStatus): void => {
    sync.className = `badge badge-${status}`
    sync.textContent = statusText[status]
  }
  const showProject = (): void => {
    project.textContent = `project: ${app.projectId}`
    app.sync.status(app.projectId).then(setSync, () => setSync('error'))
  }
  app.onSelect(showProject)
  app.onMemoryChange(['projects'], showProject)
  app.sync.onStatus((projectId, status) => {
    if (projectId === app.projectId) setSync(status)
  })
  showProject()

  // A background failure (e.g. the extractor) would otherwise only show as memory that never appears.
  const background = el('span', { class: 'badge badge-error', role: 'status', id: 'background-status', hidden: true })
  // A warning is not a failure: e.g. this device's clock is wrong (sync still stamps with the relay's time).
  const warning = el('span', { class: 'badge badge-warning', role: 'status', id: 'background-warning', hidden: true })
  const showBackground = (status: MemoryStatus): void => {
    const problems = backgroundProblems(status)
    background.hidden = problems === undefined
    background.textContent = problems ?? ''
    const warnings = backgroundWarnings(status)
    warning.hidden = warnings === undefined
    warning.textContent = warnings ?? ''
  }
  let heard = false
  app.memory.status
    .subscribe((status) => {
      heard = true
      showBackground(status)
    })
    .catch(() => {})
  // The first snapshot, unless a newer one already arrived through the subscription.
  app.memory.status.get().then(
    (status) => {
      if (!heard) showBackground(status)
    },
    () => {},
  )

  return el(
    'header',
    { class: 'top' },
    el('h1', {}, 'Engram ', el('span', { class: 'subtitle' }, 'memory inspector')),
    el(
      'p',
      { class: 'who' },
      el('span', { class: 'device', 'data-device': app.device }, `Device ${app.device}`),
      ' · ',
      el('span', {}, `user ${app.userId}`),
      ' · ',
      project,
      ' ',
      sync,
      ' ',
      network,
      ' ',
      background,
      ' ',
      warning,
    ),
  )
}
