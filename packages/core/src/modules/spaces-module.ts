import { type MemoryModule, storeOf } from '../module.js'
import { createSpaces } from '../spaces.js'

/**
 * Spaces: a level between the user and projects. With it, `projects.create({ spaceId })`
 * and `projects.list({ spaceId })` group projects (the base reads the spaces table
 * whatever the modules).
 *
 * @example const memory = await createMemory({ appId, userId, modules: [spacesModule()] })
 */
export function spacesModule(): MemoryModule<'spaces'> {
  return { name: 'spaces', tables: ['spaces'], create: (c) => ({ spaces: createSpaces(storeOf(c)) }) }
}
