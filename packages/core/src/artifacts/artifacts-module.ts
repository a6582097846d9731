import { MemoryError } from '../store/errors.js'
import { loadOnUse, methodsOnUse } from '../store/load-on-use.js'
import { type MemoryModule, storeOf } from '../store/module.js'
import { checkOptions } from '../store/validate.js'

/** Options of {@link artifactsModule}. */
export interface ArtifactsModuleOptions {
  /** Most bytes of artifacts this store keeps on the device (default 256 MiB); a `put` past it is `quota_exceeded`. */
  maxBytes?: number
}

/**
 * Artifacts: files agents produced in a project or run, stored as Blobs on the
 * device, within a byte budget. Their metadata syncs with the project; the
 * bytes stay on the device unless the app moves them (`artifacts.attach`).
 * The namespace's code loads on its first call.
 *
 * @example const memory = await createMemory({ appId, userId, modules: [artifactsModule({ maxBytes: 50e6 })] })
 * @throws MemoryError `invalid_input` for an unknown option or a budget that is not a positive integer.
 */
export function artifactsModule(options: ArtifactsModuleOptions = {}): MemoryModule<'artifacts'> {
  const o = checkOptions('artifactsModule options', options, ['maxBytes'])
  // Unset: artifacts.ts applies DEFAULT_ARTIFACT_BUDGET (read here, it would load that file at start).
  const maxBytes = o.maxBytes ?? undefined
  if (maxBytes !== undefined && (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 1))
    throw new MemoryError('invalid_input', `maxBytes must be a positive integer, got ${String(maxBytes)}`)
  return {
    name: 'artifacts',
    tables: ['artifacts'],
    install(c) {
      if (maxBytes !== undefined) storeOf(c).artifactBudget = maxBytes
    },
    create(c) {
      const load = loadOnUse('artifacts', async () => (await import('./artifacts.js')).createArtifacts(storeOf(c)))
      return { artifacts: methodsOnUse(load, ['put', 'get', 'list', 'delete', 'attach']) }
    },
  }
}
