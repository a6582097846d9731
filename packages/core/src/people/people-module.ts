import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { type MemoryModule, storeOf } from '../store/module.js'

/**
 * People and aliases (one person, several identities: `memory.people`), and
 * `memory.adopt(otherUserId)`, which merges another local user's database of
 * the same app into this store and records the alias. Their code loads on
 * first call.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [peopleModule()] })
 */
export function peopleModule(): MemoryModule<'people' | 'adopt'> {
  return {
    name: 'people',
    tables: ['people', 'entities', 'relations'],
    create(c) {
      const ctx = storeOf(c)
      const people = loadOnUse('people', async () => (await import('./people.js')).createPeople(ctx))
      const adopt = loadOnUse('adopt', async () => (await import('../replication/adopt.js')).adoptStore)
      return {
        people: methodsOnUse(people, ['resolve', 'link', 'aliases', 'isNew', 'markWelcomed']),
        adopt: async (otherUserId) => (await adopt())(ctx, otherUserId),
      }
    },
  }
}
