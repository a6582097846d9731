import { el, replace, uid, type Child } from '../dom.js'
import { errorText } from '../app.js'

/** A titled, labelled region of the page. */
export function section(id: string, title: string, ...children: Child[]): HTMLElement {
  const heading = uid('h')
  return el('section', { id, class: 'panel', 'aria-labelledby': heading }, el('h2', { id: heading }, title), ...children)
}

/** The loading / empty / error line of a panel (a polite live region). */
export interface StateLine {
  readonly element: HTMLElement
  loading(): void
  empty(text: string): void
  error(error: unknown, action: string): void
  clear(): void
}

/** Creates a panel's {@link StateLine}. */
export function stateLine(): StateLine {
  const element = el('p', { class: 'state', role: 'status', 'aria-live': 'polite' })
  const show = (kind: string, ...text: Child[]): void => {
    element.className = `state state-${kind}`
    element.hidden = text.length === 0
    replace(element, ...text)
  }
  show('none')
  return {
    element,
    loading: () => show('loading', 'Loading…'),
    empty: (text) => show('empty', text),
    error: (error, action) => show('error', `Could not ${action}: ${errorText(error)}`),
    clear: () => show('none'),
  }
}

/**
 * Runs `load` whenever asked, one at a time: a request during a run schedules
 * exactly one more run, so a burst of changes costs two loads, not twenty.
 */
export function serialRefresh(load: () => Promise<void>): () => void {
  let running = false
  let again = false
  const run = async (): Promise<void> => {
    if (running) {
      again = true
      return
    }
    running = true
    try {
      do {
        again = false
        await load()
      } while (again)
    } finally {
      running = false
    }
  }
  return () => void run()
}
