import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { type MemoryModule, storeOf } from '../store/module.js'

/**
 * Spaces: a level between the user and projects. With it, `projects.create({ spaceId })`
 * and `projects.list({ spaceId })` group projects (the base reads the spaces table
 * whatever the modules). The namespace's code loads on its first call.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [spacesModule()] })
 */
export function spacesModule(): MemoryModule<'spaces'> {
  return {
    name: 'spaces',
    tables: ['spaces'],
    create(c) {
      const load = loadOnUse('spaces', async () => (await import('./spaces.js')).createSpaces(storeOf(c)))
      return { spaces: methodsOnUse(load, ['create', 'get', 'list', 'rename', 'update', 'delete']) }
    },
  }
}
