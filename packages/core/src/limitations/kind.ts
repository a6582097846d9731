import { defineKind } from '../store/kind.js'

/** Limitations: what the agent cannot do, keyed by the folded title. */
export const limitationsKind = defineKind({
  name: 'limitations',
  tables: { limitations: { 3: 'key, status' } },
  changeKinds: ['limitations'],
  namespaces: ['limitations'],
  dump: { tables: ['limitations'] },
  encryption: { hashed: { limitations: ['key'] } },
})
