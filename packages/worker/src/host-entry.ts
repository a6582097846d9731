/**
 * The ready worker entry (`@engram/worker/host`): importing it serves Engram
 * from this worker — on `self` in a dedicated worker, on every connecting port
 * in a SharedWorker, and on any `MessagePort` handed over with `sendPort`.
 *
 * @example
 * new Worker(new URL('@engram/worker/host', import.meta.url), { type: 'module' })
 */
import { exposeMemory } from './host.js'

exposeMemory()
