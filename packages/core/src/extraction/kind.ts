import { defineKind } from '../store/kind.js'

/**
 * The background extraction queue: jobs that turn ended turns into memory (and sessions into
 * observations), and the tokens each project spent on them per day. Device-local: jobs neither
 * sync nor go into dumps (like the embedding queue).
 */
export const extractionKind = defineKind({
  name: 'extraction',
  uses: ['runtime', 'observations', 'sessions', 'messages'],
  tables: {
    extractionJobs: { 10: '++seq, [status+seq], [sessionId+kind]' },
    extractionSpend: { 10: '[projectId+day]' },
  },
  changeKinds: [],
  namespaces: ['extraction'],
})
