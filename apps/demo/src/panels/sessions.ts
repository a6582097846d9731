import type { Session } from '@engram/core'
import type { App } from '../app.js'
import { count, el, formatTime, keepFocus, replace } from '../dom.js'
import { section, serialRefresh, stateLine } from './panel.js'

/** Sessions of the selected project, newest activity first, and the messages of the one opened. */
export function sessionsPanel(app: App): HTMLElement {
  const state = stateLine()
  const list = el('ul', { class: 'sessions', 'aria-label': 'Sessions' })
  const messages = el('ol', { class: 'messages', 'aria-label': 'Messages of the opened session' })
  let opened: string | undefined
  // Conversations are opt-in per project: without it the other device's chats are not here, and the panel says why.
  const syncNote = el('p', { class: 'note', id: 'chat-sync-note' })
  syncNote.hidden = true
  const showSyncNote = (projectId: string, synced: boolean): void => {
    syncNote.hidden = synced
    if (synced) return
    replace(
      syncNote,
      'Conversations are not synced by default: this list holds the chats of this device only. ',
      el(
        'button',
        {
          type: 'button',
          on: {
            click: () => {
              app.memory.projects.setSync(projectId, { enabled: true, messages: true }).catch((error: unknown) => state.error(error, 'sync the chats'))
            },
          },
        },
        "Sync this project's chats",
      ),
    )
  }

  async function show(session: Session): Promise<void> {
    opened = session.id
    try {
      const page = await app.memory.messages.page(session.id, { limit: 100 })
      replace(
        messages,
        ...page.items.map((m) =>
          el(
            'li',
            { class: `message role-${m.role}` },
            el('strong', {}, `${m.role} #${m.seq}`),
            el('small', {}, ` ${count(m.tokens, 'token')} · ${formatTime(m.createdAt)}`),
            el('p', {}, m.content),
          ),
        ),
      )
      if (page.items.length === 0) replace(messages, el('li', { class: 'state-empty' }, 'No messages in this session.'))
    } catch (error) {
      state.error(error, 'load messages')
    }
  }

  const refresh = serialRefresh(async () => {
    const projectId = app.projectId
    try {
      const [{ items: sessions }, project] = await Promise.all([app.memory.sessions.list(projectId, { limit: 50 }), app.memory.projects.get(projectId)])
      if (projectId !== app.projectId) return
      showSyncNote(projectId, project?.sync.enabled === true && project.sync.messages === true)
      keepFocus(list, () =>
        replace(
          list,
          ...sessions.map((s) =>
            el(
              'li',
              { class: s.id === opened ? 'current' : '', 'data-key': s.id },
              el(
                'button',
                {
                  type: 'button',
                  'aria-pressed': String(s.id === opened),
                  on: {
                    click: () => {
                      void show(s).then(refresh)
                    },
                  },
                },
                s.title ?? s.id,
              ),
              el('small', {}, ` ${s.status} · last active ${formatTime(s.lastActiveAt)}`),
              s.id === app.sessionId ? el('small', { class: 'badge' }, 'chat') : null,
              s.status === 'active'
                ? el(
                    'button',
                    {
                      type: 'button',
                      'aria-label': `Close session ${s.title ?? s.id}`,
                      on: {
                        click: () => {
                          app.memory.sessions.close(s.id, {}).catch((error: unknown) => state.error(error, 'close the session'))
                        },
                      },
                    },
                    'Close',
                  )
                : null,
            ),
          ),
        ),
      )
      if (sessions.length === 0) {
        state.empty('No sessions yet: send the agent a message.')
        replace(messages)
      } else state.clear()
      const current = sessions.find((s) => s.id === opened)
      if (current) await show(current)
      else replace(messages)
    } catch (error) {
      state.error(error, 'list sessions')
    }
  })

  state.loading()
  refresh()
  app.onMemoryChange(['sessions', 'messages', 'projects'], refresh)
  app.onSelect(refresh)
  return section('sessions', 'Sessions', syncNote, state.element, list, messages)
}
