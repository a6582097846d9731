import { defineKind } from '../store/kind.js'

/** People: an id, and the canonical id it is an alias of; `adopt` merges another local user's store. */
export const peopleKind = defineKind({
  name: 'people',
  uses: ['entities', 'relations', 'projects'],
  tables: { people: { 3: 'id, canonicalId' } },
  namespaces: ['people', 'adopt'],
  dump: {},
  encryption: { hashed: { people: ['id', 'canonicalId'] } },
})
