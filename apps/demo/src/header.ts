import type { App } from './app.js'
import { el } from './dom.js'
import { statusText, type SyncStatus } from './sync-status.js'

/** Title, device and user, network state and the selected project's sync badge. */
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
  app.sync.onStatus((projectId, status) => { if (projectId === app.projectId) setSync(status) })
  showProject()

  return el('header', { class: 'top' },
    el('h1', {}, 'Engram ', el('span', { class: 'subtitle' }, 'memory inspector')),
    el('p', { class: 'who' },
      el('span', { class: 'device', 'data-device': app.device }, `Device ${app.device}`), ' · ',
      el('span', {}, `user ${app.userId}`), ' · ', project, ' ', sync, ' ', network))
}
