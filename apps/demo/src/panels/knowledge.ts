import type { Entity, Graph, Relation } from '@engram/core'
import { type App, errorText } from '../app.js'
import { count, el, field, formatTime, replace } from '../dom.js'
import { section, serialRefresh, stateLine } from './panel.js'

const SVG = 'http://www.w3.org/2000/svg'
const DAY = 86_400_000
/** How far back the time slider reaches when the graph holds nothing older. */
const DEFAULT_SPAN = 365 * DAY

/** An SVG element with attributes (text only through text nodes). */
function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const node = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v))
  if (text !== undefined) node.textContent = text
  return node
}

/**
 * The neighbourhood of an entity as a picture: the entity in the middle, what it is related to
 * around it (the next ring out for the second hop), one labelled line per relation true at the
 * slider's time.
 */
function drawGraph(graph: Graph, names: Map<string, string>): SVGElement {
  const size = 360
  const mid = size / 2
  const root = svg('svg', { viewBox: `0 0 ${size} ${size}`, width: size, height: size, role: 'img', class: 'graph' })
  const start = graph.entities[0]
  if (!start) return root
  const ring = new Map<string, number>([[start.id, 0]])
  for (let hop = 1; hop <= 2; hop++)
    for (const r of graph.relations) {
      const ends = [r.subject, r.object].filter((x): x is string => x !== undefined)
      for (const [a, b] of [ends, [...ends].reverse()]) if (a && b && ring.get(a) === hop - 1 && !ring.has(b)) ring.set(b, hop)
    }
  const at = new Map<string, { x: number; y: number }>([[start.id, { x: mid, y: mid }]])
  for (const hop of [1, 2]) {
    const ids = [...ring].filter(([, h]) => h === hop).map(([id]) => id)
    ids.forEach((id, i) => {
      const angle = (2 * Math.PI * i) / Math.max(1, ids.length) + (hop === 2 ? Math.PI / ids.length : 0)
      at.set(id, { x: mid + Math.cos(angle) * hop * 75, y: mid + Math.sin(angle) * hop * 75 })
    })
  }
  for (const r of graph.relations) {
    const a = at.get(r.subject)
    const b = r.object === undefined ? undefined : at.get(r.object)
    if (!a || !b) continue
    root.append(svg('line', { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: 'edge' }))
    root.append(svg('text', { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 3, class: 'edge-label', 'text-anchor': 'middle' }, r.predicate))
  }
  for (const [id, p] of at) {
    root.append(svg('circle', { cx: p.x, cy: p.y, r: id === start.id ? 9 : 6, class: id === start.id ? 'node start' : 'node' }))
    root.append(svg('text', { x: p.x, y: p.y + 18, class: 'node-label', 'text-anchor': 'middle' }, names.get(id) ?? id))
  }
  return root
}

/** A relation in words, with its window. */
function relationLine(r: Relation, names: Map<string, string>): HTMLElement {
  const object = r.object === undefined ? JSON.stringify(r.value) : (names.get(r.object) ?? r.object)
  const window = `${formatTime(r.validFrom)} → ${r.validTo === undefined ? 'now' : formatTime(r.validTo)}`
  return el('li', {}, el('span', {}, `${names.get(r.subject) ?? r.subject} ${r.predicate} ${object}`), el('small', {}, ` ${window}`))
}

/**
 * The knowledge graph of the selected project: pick an entity, see its neighbourhood two
 * hops out as it was at the time the slider shows (what was true when), with every relation and
 * its validity; a form records a relation between two named things from a date.
 */
export function knowledgePanel(app: App): HTMLElement {
  const state = stateLine()
  const picker = el('select', { 'aria-label': 'Entity' })
  const slider = el('input', { type: 'range', min: '0', max: '100', step: '1', value: '100', 'aria-label': 'As of' })
  const when = el('output', { 'aria-live': 'polite' })
  const picture = el('div', { class: 'graph-view' })
  const list = el('ul', { class: 'relations', 'aria-label': 'Relations true at that time' })
  let entities: Entity[] = []
  let span = { from: Date.now() - DEFAULT_SPAN, to: Date.now() }
  const timeAt = () => Math.round(span.from + ((span.to - span.from) * Number(slider.value)) / 100)

  const draw = serialRefresh(async () => {
    const id = picker.value
    const t = timeAt()
    replace(when, Number(slider.value) === 100 ? 'now' : formatTime(t))
    if (id === '') return replace(picture)
    try {
      const graph = await app.memory.relations.around(app.projectId, id, { depth: 2, limit: 60, asOf: t })
      const names = new Map(graph.entities.map((e) => [e.id, e.name]))
      replace(picture, drawGraph(graph, names))
      replace(list, ...(graph.relations.length ? graph.relations.map((r) => relationLine(r, names)) : [el('li', {}, 'Nothing held then.')]))
      state.clear()
    } catch (error) {
      state.error(error, 'walk the graph')
    }
  })

  const load = serialRefresh(async () => {
    try {
      entities = await app.memory.entities.list(app.projectId, { limit: 500 })
      const relations = await app.memory.relations.list(app.projectId, { limit: 10_000 })
      const earliest = relations.reduce((m, r) => Math.min(m, r.validFrom), Date.now())
      span = { from: Math.min(earliest, Date.now() - DAY), to: Date.now() }
      const chosen = picker.value
      replace(picker, ...entities.map((e) => el('option', { value: e.id }, `${e.name} (${e.type})`)))
      if (entities.some((e) => e.id === chosen)) picker.value = chosen
      if (entities.length === 0) state.empty('No entities yet: record a relation below.')
      else state.clear()
      replace(summary, `${count(entities.length, 'entity', 'entities')}, ${count(relations.length, 'relation')}`)
      draw()
    } catch (error) {
      state.error(error, 'load the entities')
    }
  })

  const subject = el('input', { required: true, autocomplete: 'off', placeholder: 'Dana' })
  const predicate = el('input', { required: true, autocomplete: 'off', placeholder: 'works_at' })
  const object = el('input', { required: true, autocomplete: 'off', placeholder: 'Acme' })
  const from = el('input', { type: 'date' })
  const summary = el('p', { class: 'hint' })
  const form = el(
    'form',
    {
      class: 'inline-form',
      on: {
        submit: (e) => {
          e.preventDefault()
          void record()
        },
      },
    },
    field('Subject', subject),
    field('Predicate', predicate),
    field('Object', object),
    field('Valid from', from, 'empty: now'),
    el('button', { type: 'submit' }, 'Record'),
  )
  async function record(): Promise<void> {
    try {
      const s = await app.memory.entities.upsert(app.projectId, { name: subject.value.trim(), type: 'thing' })
      const o = await app.memory.entities.upsert(app.projectId, { name: object.value.trim(), type: 'thing' })
      const validFrom = from.value === '' ? undefined : Date.parse(`${from.value}T00:00:00Z`)
      await app.memory.relations.add(app.projectId, {
        subject: s.id,
        predicate: predicate.value.trim(),
        object: o.id,
        ...(validFrom === undefined ? {} : { validFrom }),
      })
      picker.value = s.id
      form.reset()
      load()
    } catch (error) {
      app.report(new Error(errorText(error)), 'record the relation')
    }
  }

  picker.addEventListener('change', draw)
  slider.addEventListener('input', draw)
  app.onSelect(() => load())
  app.onMemoryChange(['entities', 'relations'], load)
  load()
  return section(
    'knowledge',
    'Knowledge graph',
    summary,
    el('div', { class: 'inline-form' }, field('Entity', picker), field('As of', slider), when),
    state.element,
    picture,
    list,
    el('h3', {}, 'Record a relation'),
    form,
  )
}
