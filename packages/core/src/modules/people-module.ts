import { adoptStore } from '../adopt.js'
import { type MemoryModule, storeOf } from '../module.js'
import { createPeople } from '../people.js'

/**
 * People and aliases (one person, several identities: `memory.people`), and
 * `memory.adopt(otherUserId)`, which merges another local user's database of
 * the same app into this store and records the alias.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [peopleModule()] })
 */
export function peopleModule(): MemoryModule<'people' | 'adopt'> {
  return {
    name: 'people',
    tables: ['people'],
    create(c) {
      const ctx = storeOf(c)
      return { people: createPeople(ctx), adopt: (otherUserId) => adoptStore(ctx, otherUserId) }
    },
  }
}
