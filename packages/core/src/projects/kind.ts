import { defineKind } from '../store/kind.js'

/** Projects: every record of the store belongs to one. */
export const projectsKind = defineKind({
  name: 'projects',
  tables: { projects: { 1: 'id, updatedAt' } },
  changeKinds: ['projects'],
  namespaces: ['projects'],
  dump: { tables: ['projects'] },
})
