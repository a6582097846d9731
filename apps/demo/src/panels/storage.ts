import type { StorageEstimate } from '@engram/core'
import type { App } from '../app.js'
import { el, replace } from '../dom.js'
import { section, serialRefresh, stateLine } from './panel.js'

/** Bytes as a short figure: `812 kB`, `3.4 MB`, `1.2 GB`. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return unit === 0 ? `${bytes} bytes` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`
}

/**
 * The origin's storage as `memory.stats()` reports it: bytes used of the
 * quota (a meter), whether the browser keeps the data under storage pressure,
 * and a button that asks it to (`memory.persist()`). Refreshed when memory
 * changes.
 */
export function storagePanel(app: App): HTMLElement {
  const state = stateLine()
  const used = el('span', { class: 'storage-used', id: 'storage-used' })
  const meter = el('meter', { id: 'storage-meter', min: '0', max: '1', value: '0', 'aria-labelledby': 'storage-used' })
  const persisted = el('span', { class: 'badge', id: 'storage-persisted' })
  const persist = el(
    'button',
    {
      type: 'button',
      on: {
        click: () => {
          persist.disabled = true
          app.memory
            .persist()
            .then((granted) => {
              if (!granted) state.empty('The browser did not grant persistent storage (it decides by its own rules, e.g. site engagement).')
              refresh()
            })
            .catch((error: unknown) => state.error(error, 'ask for persistent storage'))
            .finally(() => {
              persist.disabled = false
            })
        },
      },
    },
    'Keep data (persist)',
  )

  const show = (storage: StorageEstimate | undefined): void => {
    if (!storage) {
      replace(used, 'The browser gives no storage estimate here.')
      meter.hidden = true
      persisted.hidden = true
      return
    }
    const share = storage.quotaBytes > 0 ? storage.usedBytes / storage.quotaBytes : 0
    replace(used, `${formatBytes(storage.usedBytes)} used of ${formatBytes(storage.quotaBytes)} quota (${(share * 100).toFixed(share < 0.01 ? 2 : 1)}%)`)
    meter.hidden = false
    meter.max = storage.quotaBytes
    meter.value = storage.usedBytes
    meter.high = storage.quotaBytes * 0.8
    persisted.hidden = storage.persisted === undefined
    persisted.className = storage.persisted ? 'badge badge-online' : 'badge'
    persisted.textContent = storage.persisted ? 'persistent' : 'best effort (may be evicted)'
    persist.hidden = storage.persisted === true
  }

  const refresh = serialRefresh(async () => {
    try {
      show((await app.memory.stats()).storage)
    } catch (error) {
      state.error(error, 'read storage')
    }
  })
  app.onMemoryChange(['facts', 'blocks', 'messages', 'sessions', 'projects'], refresh)
  refresh()
  return section('storage', 'Storage', el('p', { class: 'meter-row' }, meter, ' ', used), el('p', {}, persisted, ' ', persist), state.element)
}
