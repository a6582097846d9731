import type { Transaction } from 'dexie'
import { defineKind } from '../store/kind.js'
import { freshHandle } from './task-handle.js'

/** The agent runtime: its journal, runs and checkpoints, tasks, usage, lessons and outcomes, and turns. */
export const runtimeKind = defineKind({
  name: 'runtime',
  uses: ['projects', 'sessions', 'facts', 'blocks', 'extraction', 'observations', 'entities', 'relations'],
  tables: {
    journal: { 1: '[sessionId+seq], [sessionId+idempotencyKey], [sessionId+kind+seq], [sessionId+resumeToken+seq]' },
    journalSessions: { 1: 'sessionId, last, first' },
    runs: { 1: 'runId' },
    checkpoints: { 1: '[runId+phase], [runId+order]' },
    toolEvents: { 1: '[runId+seq]' },
    tasks: { 1: 'id, projectId, [status+dueAt], [projectId+status]', 3: 'id, projectId, [status+dueAt], [projectId+status], &handle' },
    usage: { 1: '++seq, sessionId, projectId' },
    lessons: { 1: '[projectId+domain+key], projectId' },
    outcomes: { 1: '++seq, [projectId+domain]' },
    turns: { 1: '[sessionId+turnId], [sessionId+status], updatedAt' },
  },
  // Version 3: every task gets a unique handle.
  upgrades: { 3: giveHandles },
  changeKinds: ['journal', 'runs', 'tasks', 'usage', 'lessons'],
  namespaces: ['journal', 'runs', 'tasks', 'usage', 'lessons', 'turns'],
  dump: {
    tables: ['journal', 'runs', 'checkpoints', 'toolEvents', 'tasks', 'usage', 'lessons', 'outcomes', 'turns'],
    projectRows: ['tasks', 'lessons', 'outcomes'],
  },
  encryption: { hashed: { lessons: ['domain', 'key'], outcomes: ['domain'], journal: ['kind', 'idempotencyKey', 'resumeToken'], checkpoints: ['phase'] } },
})

async function giveHandles(tx: Transaction): Promise<void> {
  const taken = new Set<string>()
  await tx
    .table('tasks')
    .toCollection()
    .modify((task: { handle?: string }) => {
      task.handle = freshHandle(taken)
      taken.add(task.handle)
    })
}
