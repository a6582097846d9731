import type { FactVersion } from '@engram/core'
import type { App } from '../app.js'
import { count, el, formatTime, formatValue, replace } from '../dom.js'
import type { StateLine } from './panel.js'

/**
 * Which history disclosures are open, by fact key, and what they showed last.
 * It outlives the table rows: a refresh (the user's own change or a synced one)
 * rebuilds every row, and an open history must come back open, not collapse.
 */
export interface HistoryMemory {
  readonly open: Set<string>
  readonly versions: Map<string, FactVersion[]>
  /** Forgets everything (another project was selected). */
  clear(): void
}

/** Creates an empty {@link HistoryMemory}. */
export function historyMemory(): HistoryMemory {
  const open = new Set<string>()
  const versions = new Map<string, FactVersion[]>()
  return {
    open,
    versions,
    clear: () => {
      open.clear()
      versions.clear()
    },
  }
}

/**
 * A "History" disclosure for one fact key: every version, oldest first, loaded
 * when opened. Re-created open (with the versions it showed, then reloaded) when
 * `memory` says it was open.
 */
export function factHistory(app: App, key: string, state: StateLine, memory: HistoryMemory): HTMLElement {
  const list = el('ol', { class: 'history', 'aria-label': `History of ${key}` })
  const details = el('details', { class: 'fact-history' }, el('summary', { 'aria-label': `History of ${key}` }, 'History'), list)
  const show = (versions: FactVersion[]): void => {
    if (versions.length === 0) return replace(list, el('li', {}, 'No history.'))
    replace(
      list,
      ...versions.map((v) =>
        el(
          'li',
          { class: v.deleted ? 'deleted' : '' },
          el('span', { class: 'value' }, v.deleted ? '(deleted)' : formatValue(v.value)),
          el('small', {}, ` v${v.version} · ${formatTime(v.validFrom)} → ${v.validTo === undefined ? 'now' : formatTime(v.validTo)}`),
          ...(provenance(v) ? [el('small', { class: 'provenance' }, ` · ${provenance(v)}`)] : []),
        ),
      ),
    )
  }
  const load = (): void => {
    const projectId = app.projectId
    app.memory.facts.history(projectId, key).then(
      (versions) => {
        if (projectId !== app.projectId) return
        memory.versions.set(key, versions)
        show(versions)
      },
      (error: unknown) => state.error(error, 'load the history'),
    )
  }
  // Opening by script may (or may not) queue a toggle event: skip that one, it is already loading.
  let reopened = false
  details.addEventListener('toggle', () => {
    if (details.open) memory.open.add(key)
    else memory.open.delete(key)
    if (reopened) {
      reopened = false
      return
    }
    if (!details.open) return
    replace(list, el('li', {}, 'Loading…'))
    load()
  })
  if (memory.open.has(key)) {
    reopened = true
    details.open = true
    const last = memory.versions.get(key)
    if (last !== undefined) show(last)
    else replace(list, el('li', {}, 'Loading…'))
    load()
  }
  return details
}

/** Where a version came from, as the history shows it: the tool, the extractor's turn and the messages it read. */
function provenance(v: FactVersion): string {
  const s = v.source
  if (!s) return ''
  const parts = [s.tool ? `tool ${s.tool}` : '', s.note ?? '', s.messageIds?.length ? count(s.messageIds.length, 'message') : ''].filter((p) => p !== '')
  return parts.length > 0 ? `from ${parts.join(', ')}` : ''
}
