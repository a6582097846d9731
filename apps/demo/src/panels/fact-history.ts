import type { App } from '../app.js'
import { el, formatTime, formatValue, replace } from '../dom.js'
import type { StateLine } from './panel.js'

/** A "History" disclosure for one fact key: every version, oldest first, loaded when opened. */
export function factHistory(app: App, key: string, state: StateLine): HTMLElement {
  const list = el('ol', { class: 'history', 'aria-label': `History of ${key}` })
  const details = el('details', { class: 'fact-history' }, el('summary', { 'aria-label': `History of ${key}` }, 'History'), list)
  details.addEventListener('toggle', () => {
    if (!details.open) return
    replace(list, el('li', {}, 'Loading…'))
    app.memory.facts.history(app.projectId, key).then((versions) => {
      replace(list, ...versions.map(v => el('li', { class: v.deleted ? 'deleted' : '' },
        el('span', { class: 'value' }, v.deleted ? '(deleted)' : formatValue(v.value)),
        el('small', {}, ` v${v.version} · ${formatTime(v.validFrom)} → ${v.validTo === undefined ? 'now' : formatTime(v.validTo)}`))))
      if (versions.length === 0) replace(list, el('li', {}, 'No history.'))
    }, (error: unknown) => state.error(error, 'load the history'))
  })
  return details
}
