import { defineKind } from '../store/kind.js'

/** Spaces: groups of projects (a project names its space in `spaceId`). */
export const spacesKind = defineKind({
  name: 'spaces',
  uses: ['projects'],
  tables: { spaces: { 3: 'id' } },
  changeKinds: ['spaces'],
  namespaces: ['spaces'],
  dump: { tables: ['spaces'] },
})
