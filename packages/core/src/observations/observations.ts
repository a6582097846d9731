import type { StoreContext } from '../store/store-context.js'
import { checkId, checkOptions } from '../store/validate.js'
import { read } from '../store/write.js'
import { toObservation, type Observation } from './observation-rows.js'
import { activeObservations, sessionObservations } from './observation-writes.js'

export type { Observation } from './observation-rows.js'

/** Options of {@link ObservationsApi.list}. */
export interface ListObservationsOptions {
  /** Also the observations a reflection condensed (and expired ones). */
  all?: boolean
}

/** `memory.observations`: what the observer and reflector wrote of long sessions (observational memory). */
export interface ObservationsApi {
  /**
   * A session's observations in force (not condensed by a reflection, not expired), oldest first;
   * with `all`, every one but purged ones, in the order they were made.
   * @throws MemoryError `invalid_input`, `closed`.
   */
  list(sessionId: string, options?: ListObservationsOptions): Promise<Observation[]>
}

/** Creates the observations namespace of a store. */
export function createObservations(ctx: StoreContext): ObservationsApi {
  return {
    async list(sessionId, options = {}) {
      checkId('sessionId', sessionId)
      const o = checkOptions('options', options, ['all'])
      const now = ctx.now()
      const rows = await read(ctx, ['observations'], async () =>
        o.all === true ? (await sessionObservations(ctx, sessionId)).filter((r) => r.deletedAt === undefined) : activeObservations(ctx, sessionId, now),
      )
      return rows.map(toObservation)
    },
  }
}
