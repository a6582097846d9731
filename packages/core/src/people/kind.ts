import { defineKind } from '../store/kind.js'

/** People: an id, and the canonical id it is an alias of; `adopt` merges another local user's store. */
export const peopleKind = defineKind({
  name: 'people',
  tables: { people: { 3: 'id, canonicalId' } },
  changeKinds: ['people'],
  namespaces: ['people', 'adopt'],
  dump: { tables: ['people'] },
  encryption: { hashed: { people: ['id', 'canonicalId'] } },
})
