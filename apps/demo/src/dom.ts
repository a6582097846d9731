/**
 * Safe element builders. Memory text only ever reaches the page through
 * `textContent` / text nodes and attribute values — never as markup.
 */

/** Something that can be a child: nodes, text (rendered literally), or nothing. */
export type Child = Node | string | number | null | undefined | false

/** Element properties: `class`, event handlers under `on`, form state, and plain attributes. */
export interface Props {
  class?: string
  on?: { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void }
  /** Form state is set as a property (the attribute only holds the default). */
  value?: string
  checked?: boolean
  [attribute: string]: unknown
}

/**
 * Creates an element. Attribute values are strings (booleans toggle the
 * attribute, undefined skips it); `on*` attributes are refused so no string
 * can ever become a handler.
 *
 * @throws TypeError for an `on…` attribute name.
 */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || name === 'on' || name === 'value' || name === 'checked') continue
    if (name === 'class') node.className = String(value)
    else if (/^on/i.test(name)) throw new TypeError(`refusing attribute ${name}: use props.on`)
    else if (typeof value === 'boolean') node.toggleAttribute(name, value)
    else node.setAttribute(name, String(value))
  }
  if (props.value !== undefined) (node as HTMLInputElement).value = props.value
  if (props.checked !== undefined) (node as HTMLInputElement).checked = props.checked
  for (const [type, handler] of Object.entries(props.on ?? {})) node.addEventListener(type, handler as EventListener)
  append(node, children)
  return node
}

/** Appends children, turning strings and numbers into text nodes. */
export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child)
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren()
  append(parent, children)
}

const focusable = 'a[href], button, input, select, textarea, summary'
const nameOf = (control: Element): string => control.getAttribute('aria-label') ?? control.textContent?.trim() ?? ''

/**
 * Runs `render` (which replaces the rows of `container`) and keeps keyboard
 * focus where it was: on the same control (by accessible name, else by
 * position) of the row with the same `data-key`. Without it every refresh —
 * after the user's own action or a synced change — drops focus to the page body.
 */
export function keepFocus(container: Element, render: () => void): void {
  const active = document.activeElement
  const row = active !== null && container.contains(active) ? active.closest('[data-key]') : null
  if (active === null || row === null || !container.contains(row)) return render()
  const key = row.getAttribute('data-key')
  const name = nameOf(active)
  const index = [...row.querySelectorAll(focusable)].indexOf(active)
  render()
  const now = document.activeElement
  if (now !== null && now !== document.body) return // still in place, or moved on purpose
  const next = [...container.querySelectorAll('[data-key]')].find((r) => r.getAttribute('data-key') === key)
  const controls = [...(next?.querySelectorAll<HTMLElement>(focusable) ?? [])]
  ;(controls.find((c) => nameOf(c) === name) ?? controls[index])?.focus()
}

let nextId = 0
/** A document-unique id for label/aria wiring. */
export function uid(prefix: string): string {
  return `${prefix}-${++nextId}`
}

/** Adds (or removes) `id` in the space-separated `aria-describedby` list of `control`. */
function describedBy(control: Element, id: string, on: boolean): void {
  const ids = (control.getAttribute('aria-describedby') ?? '').split(/\s+/).filter((i) => i !== '' && i !== id)
  if (on) ids.push(id)
  if (ids.length === 0) control.removeAttribute('aria-describedby')
  else control.setAttribute('aria-describedby', ids.join(' '))
}

/**
 * A labelled control: `<label for>` + the control, wrapped in a `.field`; the
 * hint (if any) is linked to the control with `aria-describedby`, so a screen
 * reader reads it with the label. With `error` (made by {@link fieldError} for
 * this control) the field holds its message, which clears once the user edits.
 */
export function field(label: string, control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, hint?: string, error?: FieldError): HTMLElement {
  if (control.id === '') control.id = uid('f')
  const note = hint ? el('small', { class: 'hint', id: uid('hint') }, hint) : null
  if (note !== null) describedBy(control, note.id, true)
  if (error !== undefined) control.addEventListener('input', () => error.clear())
  return el('div', { class: 'field' }, el('label', { for: control.id }, label), control, note, error?.element)
}

/** The error message of one control (see {@link fieldError}). */
export interface FieldError {
  /** Put it next to the control (it stays hidden until {@link FieldError.show}). */
  readonly element: HTMLElement
  /** Marks the control `aria-invalid` and links it to `text` through `aria-describedby`. */
  show(text: string): void
  /** Removes the message, the mark and the link. */
  clear(): void
}

/** An error message linked to `control`: `aria-invalid` + `aria-describedby`, announced when shown. */
export function fieldError(control: HTMLElement): FieldError {
  const element = el('small', { class: 'field-error', id: uid('err'), role: 'alert' })
  element.hidden = true
  return {
    element,
    show(text) {
      element.textContent = text
      element.hidden = false
      control.setAttribute('aria-invalid', 'true')
      describedBy(control, element.id, true)
    },
    clear() {
      if (element.hidden) return
      element.hidden = true
      element.textContent = ''
      control.removeAttribute('aria-invalid')
      describedBy(control, element.id, false)
    },
  }
}

/** A memory value as display text: strings as they are, anything else as JSON. */
export function formatValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** Parses what a user typed: JSON when it is JSON (`42`, `{"a":1}`), else the text itself. */
export function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/**
 * A count with its noun in the right number: `count(1, 'item')` → "1 item",
 * `count(2, 'item')` → "2 items" (`plural` for irregular nouns).
 */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`
}

/** A short local date-time. */
export function formatTime(ms: number | undefined): string {
  if (ms === undefined) return '—'
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' })
}
