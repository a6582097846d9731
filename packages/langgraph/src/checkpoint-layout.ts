/**
 * Where {@link EngramSaver} keeps what, in Engram's runs namespace.
 *
 * Runs are the runtime memory Engram keeps on the device only (never synced),
 * keyed by free run ids, with create-or-replace phases in creation order and a
 * whole-run delete: the shape of a checkpointer's state. Ids are URI-encoded
 * so any thread id or namespace makes a valid run id.
 *
 * | run id | phases | holds |
 * | --- | --- | --- |
 * | `<prefix>` | one per thread id | the threads (status `thread` or `deleted`), for `list` without a thread |
 * | `<prefix>/<thread>` | `["<ns>","<checkpoint id>"]` | the thread's index: id, parent, metadata (for `list`, latest) |
 * | `<prefix>/<thread>/<ns>/<checkpoint id>` | `checkpoint:<n>`, then `checkpoint` | the checkpoint, in pieces; its head, written last, commits it |
 * | `<prefix>/<thread>/<ns>/<checkpoint id>/writes` | `<task id>,<idx>` + pieces | pending writes |
 * | `<prefix>/<thread>/<ns>/channel/<channel>/<version>` | `value` + pieces | one version of one channel's value |
 *
 * Channel values are stored once per version (as LangGraph's Postgres saver
 * does): a checkpoint keeps only `channel_versions`, and loading it reads each
 * channel at its version. A long conversation is not copied into every step.
 */

/** The default run id prefix. */
export const DEFAULT_PREFIX = 'langgraph'

const enc = encodeURIComponent

/** The run ids of a saver with `prefix`. */
export interface CheckpointLayout {
  /** The registry of threads. */
  readonly threads: string
  /** A thread's index of checkpoints. */
  thread(threadId: string): string
  /** One checkpoint's pieces. */
  checkpoint(threadId: string, ns: string, checkpointId: string): string
  /** One checkpoint's pending writes. */
  writes(threadId: string, ns: string, checkpointId: string): string
  /** One version of one channel's value. */
  channel(threadId: string, ns: string, channel: string, version: string | number): string
}

/** Builds the run ids of a saver whose runs start with `prefix`. */
export function checkpointLayout(prefix: string): CheckpointLayout {
  return {
    threads: prefix,
    thread: (threadId) => `${prefix}/${enc(threadId)}`,
    checkpoint: (threadId, ns, checkpointId) => `${prefix}/${enc(threadId)}/${enc(ns)}/${enc(checkpointId)}`,
    writes: (threadId, ns, checkpointId) => `${prefix}/${enc(threadId)}/${enc(ns)}/${enc(checkpointId)}/writes`,
    channel: (threadId, ns, channel, version) => `${prefix}/${enc(threadId)}/${enc(ns)}/channel/${enc(channel)}/${enc(String(version))}`,
  }
}

/** The index phase of a checkpoint: unambiguous for any namespace and id. */
export function indexPhase(ns: string, checkpointId: string): string {
  return JSON.stringify([ns, checkpointId])
}
