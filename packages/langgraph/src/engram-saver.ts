import { MemoryError, type Json } from '@engram/core'
import type { RunnableConfig } from '@langchain/core/runnables'
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  copyCheckpoint,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from '@langchain/langgraph-checkpoint'
import { encodeBlob } from './blob-codec.js'
import { type CheckpointLayout, checkpointLayout, DEFAULT_PREFIX, indexPhase } from './checkpoint-layout.js'
import { checkSaverOptions, configIds, requireThreadId } from './saver-input.js'
import { readBlobs, type RunsMemory, writeBlob } from './run-blobs.js'

/** Options of {@link EngramSaver}. */
export interface EngramSaverOptions {
  /** First segment of every run id the saver writes; default `langgraph`. Two savers with different prefixes share nothing. */
  prefix?: string
  /** How checkpoints and writes are serialized; default LangGraph's `JsonPlusSerializer`. */
  serde?: SerializerProtocol
}

/** One entry of a thread's index. */
interface IndexEntry {
  ns: string
  id: string
  /** The checkpoint's metadata, deserialized on demand (only `list` with a filter needs it). */
  metadata(): Promise<CheckpointMetadata>
  channels: [string, string][]
}

/**
 * A LangGraph.js checkpointer that keeps checkpoints and pending writes in
 * IndexedDB through an Engram memory — in the page (`openMemory`) or through a
 * worker (`connectMemory`). State lives in the runs namespace (on the device,
 * never synced); checkpoints and writes of any size are stored in pieces.
 *
 * @example
 * const memory = await openMemory({ appId: 'my-agent', userId: 'u1' })
 * const graph = builder.compile({ checkpointer: new EngramSaver(memory) })
 * await graph.invoke(input, { configurable: { thread_id: 'chat-1' } })
 */
export class EngramSaver extends BaseCheckpointSaver {
  readonly #memory: RunsMemory
  readonly #layout: CheckpointLayout

  /** @throws MemoryError `invalid_input` for a memory without `runs` or a bad option. */
  constructor(memory: RunsMemory, options: EngramSaverOptions = {}) {
    const checked = checkSaverOptions(memory, options)
    super(checked.serde)
    this.#memory = memory
    this.#layout = checkpointLayout(checked.prefix ?? DEFAULT_PREFIX)
  }

  /** The checkpoint `config` names (its `checkpoint_id`, or the latest of the thread and namespace), or undefined. */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const { threadId, ns, checkpointId } = configIds(config)
    if (threadId === undefined) return undefined
    if (checkpointId !== undefined) return this.#load(threadId, ns, checkpointId)
    const latest = (await this.#index(threadId)).filter((e) => e.ns === ns).sort(byIdDescending)[0]
    return latest === undefined ? undefined : this.#load(threadId, ns, latest.id)
  }

  /** The checkpoints matching `config` and `options`, newest first within a thread and namespace. */
  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { threadId, ns, checkpointId } = configIds(config, { nsOptional: true })
    const before = options.before === undefined ? undefined : configIds(options.before).checkpointId
    let remaining = options.limit ?? Number.POSITIVE_INFINITY
    const threads = threadId === undefined ? await this.#threads() : [threadId]
    for (const thread of threads) {
      const entries = (await this.#index(thread))
        .filter((e) => (ns === undefined || e.ns === ns) && (checkpointId === undefined || e.id === checkpointId))
        .filter((e) => before === undefined || e.id < before)
        .sort((a, b) => (a.ns === b.ns ? byIdDescending(a, b) : a.ns < b.ns ? -1 : 1))
      for (const entry of entries) {
        if (remaining <= 0) return
        if (options.filter !== undefined && !matchesFilter(await entry.metadata(), options.filter)) continue
        const tuple = await this.#load(thread, entry.ns, entry.id)
        if (tuple === undefined) continue
        remaining -= 1
        yield tuple
      }
    }
  }

  /**
   * Stores a checkpoint with its metadata; its parent is `config`'s `checkpoint_id`. Only the channels in `newVersions` are written.
   * @throws MemoryError `invalid_input` (no `thread_id`), `limit_exceeded` (metadata over 128 Ki characters as JSON), `closed`.
   */
  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const { threadId, ns, checkpointId: parent } = configIds(config)
    const thread = requireThreadId(threadId, 'put')
    const id = checkpoint.id
    const runs = this.#memory.runs
    const { channel_values: values, ...rest } = copyCheckpoint(checkpoint)
    // Only the channels this step changed are written; the others are already stored at their versions.
    const channels: [string, string][] = []
    for (const [channel, version] of Object.entries(newVersions ?? {})) {
      if (!Object.hasOwn(values, channel)) continue
      const [valueType, valueBytes] = await this.serde.dumpsTyped(values[channel])
      await writeBlob(runs, this.#layout.channel(thread, ns, channel, version), 'value', encodeBlob(valueType, valueBytes), {})
      channels.push([channel, String(version)])
    }
    const [[type, bytes], [metadataType, metadataBytes]] = await Promise.all([
      this.serde.dumpsTyped({ ...rest, channel_values: {} }),
      this.serde.dumpsTyped(metadata),
    ])
    const meta = encodeBlob(metadataType, metadataBytes)
    if (meta.pieces.length > 1)
      throw new MemoryError('limit_exceeded', `checkpoint metadata of ${metadataBytes.length} bytes is too large to index; keep metadata small`)
    const head: Record<string, Json> = { metadataType: meta.type, metadataEncoding: meta.encoding, metadata: meta.pieces[0] ?? '' }
    if (parent !== undefined) head.parent = parent
    await writeBlob(runs, this.#layout.checkpoint(thread, ns, id), 'checkpoint', encodeBlob(type, bytes), head)
    await runs.setCheckpoint(this.#layout.threads, thread, { status: 'thread' })
    await runs.setCheckpoint(this.#layout.thread(thread), indexPhase(ns, id), { status: 'checkpoint', output: { ns, id, channels, ...head } })
    return { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: id } }
  }

  /**
   * Stores writes of task `taskId` against the checkpoint `config` names. A regular write already stored is kept.
   * @throws MemoryError `invalid_input` (no `thread_id` or `checkpoint_id`), `closed`.
   */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ''): Promise<void> {
    const { threadId, ns, checkpointId } = configIds(config)
    const thread = requireThreadId(threadId, 'putWrites')
    if (checkpointId === undefined) throw new MemoryError('invalid_input', 'putWrites needs config.configurable.checkpoint_id')
    const runId = this.#layout.writes(thread, ns, checkpointId)
    const runs = this.#memory.runs
    const stored = new Set((await runs.checkpoints(runId)).filter((p) => p.status === 'head').map((p) => p.phase))
    for (const [i, [channel, value]] of writes.entries()) {
      const idx = WRITES_IDX_MAP[channel] ?? i
      const phase = `${taskId},${idx}`
      if (idx >= 0 && stored.has(phase)) continue
      const [type, bytes] = await this.serde.dumpsTyped(value)
      await writeBlob(runs, runId, phase, encodeBlob(type, bytes), { taskId, channel, idx, taskPath })
    }
  }

  /** Deletes every checkpoint, write and channel value of a thread. @throws MemoryError `invalid_input` (empty id), `closed`. */
  async deleteThread(threadId: string): Promise<void> {
    const thread = requireThreadId(threadId, 'deleteThread')
    const runs = this.#memory.runs
    const entries = await this.#index(thread)
    // Readers stop seeing the thread first; a crash after this leaves unreachable pieces, never half a thread.
    await runs.setCheckpoint(this.#layout.threads, thread, { status: 'deleted' })
    await runs.deleteCheckpoints(this.#layout.thread(thread))
    for (const e of entries) {
      await runs.deleteCheckpoints(this.#layout.checkpoint(thread, e.ns, e.id))
      await runs.deleteCheckpoints(this.#layout.writes(thread, e.ns, e.id))
      for (const [channel, version] of e.channels) await runs.deleteCheckpoints(this.#layout.channel(thread, e.ns, channel, version))
    }
  }

  async #threads(): Promise<string[]> {
    return (await this.#memory.runs.checkpoints(this.#layout.threads)).filter((p) => p.status === 'thread').map((p) => p.phase)
  }

  async #index(threadId: string): Promise<IndexEntry[]> {
    const phases = await this.#memory.runs.checkpoints(this.#layout.thread(threadId))
    const entries: IndexEntry[] = []
    for (const p of phases) {
      const o = p.output
      if (p.status !== 'checkpoint' || typeof o !== 'object' || o === null || Array.isArray(o)) continue
      if (typeof o.ns !== 'string' || typeof o.id !== 'string' || typeof o.metadata !== 'string') continue
      const channels = Array.isArray(o.channels) ? o.channels.filter(isChannelVersion) : []
      const { metadataType, metadataEncoding, metadata } = o
      const entry: IndexEntry = {
        ns: o.ns,
        id: o.id,
        channels,
        metadata: async () => (await this.serde.loadsTyped(String(metadataType), toBytes(metadataEncoding, metadata))) as CheckpointMetadata,
      }
      entries.push(entry)
    }
    return entries
  }

  async #load(threadId: string, ns: string, checkpointId: string): Promise<CheckpointTuple | undefined> {
    const [blob] = readBlobs(await this.#memory.runs.checkpoints(this.#layout.checkpoint(threadId, ns, checkpointId)))
    if (blob === undefined) return undefined
    const { head } = blob
    const checkpoint = (await this.serde.loadsTyped(head.type, blob.bytes)) as Checkpoint
    checkpoint.channel_values = await this.#channelValues(threadId, ns, checkpoint.channel_versions ?? {})
    const metadata = (await this.serde.loadsTyped(String(head.metadataType), toBytes(head.metadataEncoding, head.metadata))) as CheckpointMetadata
    const parent = typeof head.parent === 'string' ? head.parent : undefined
    if (checkpoint.v < 4 && parent !== undefined) await this.#migratePendingSends(checkpoint, threadId, ns, parent)
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpointId } },
      checkpoint,
      metadata,
      pendingWrites: await this.#writes(threadId, ns, checkpointId),
    }
    if (parent !== undefined) tuple.parentConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: parent } }
    return tuple
  }

  /** Each channel's value at the version the checkpoint names; channels never stored (emptied) are absent. */
  async #channelValues(threadId: string, ns: string, versions: ChannelVersions): Promise<Record<string, unknown>> {
    const loaded = await Promise.all(
      Object.entries(versions).map(async ([channel, version]) => {
        const [blob] = readBlobs(await this.#memory.runs.checkpoints(this.#layout.channel(threadId, ns, channel, version)))
        return blob === undefined ? undefined : ([channel, await this.serde.loadsTyped(blob.head.type, blob.bytes)] as const)
      }),
    )
    return Object.fromEntries(loaded.filter((e) => e !== undefined))
  }

  /** Pending writes in `writesSortKey` order, as live execution applies them. */
  async #writes(threadId: string, ns: string, checkpointId: string): Promise<CheckpointPendingWrite[]> {
    const blobs = readBlobs(await this.#memory.runs.checkpoints(this.#layout.writes(threadId, ns, checkpointId)))
    const keyed = blobs.map((b) => ({ b, key: writesSortKey(String(b.head.taskPath ?? ''), String(b.head.taskId), Number(b.head.idx)) }))
    keyed.sort((x, y) => compareWritesSortKeys(x.key, y.key))
    return Promise.all(
      keyed.map(async ({ b }) => [String(b.head.taskId), String(b.head.channel), await this.serde.loadsTyped(b.head.type, b.bytes)] as CheckpointPendingWrite),
    )
  }

  /** Checkpoints before format 4 kept pending sends as the parent's TASKS writes. */
  async #migratePendingSends(checkpoint: Checkpoint, threadId: string, ns: string, parentId: string): Promise<void> {
    const sends = (await this.#writes(threadId, ns, parentId)).filter(([, channel]) => channel === TASKS).map(([, , value]) => value)
    checkpoint.channel_values ??= {}
    checkpoint.channel_values[TASKS] = sends
    checkpoint.channel_versions ??= {}
    const versions = Object.values(checkpoint.channel_versions)
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined)
  }
}

function isChannelVersion(value: Json): value is [string, string] {
  return Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string'
}

function byIdDescending(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}

function matchesFilter(metadata: CheckpointMetadata, filter: Record<string, unknown> | undefined): boolean {
  if (filter === undefined) return true
  const record = metadata as Record<string, unknown>
  return Object.entries(filter).every(([key, value]) => record[key] === value)
}

function toBytes(encoding: Json | undefined, text: Json | undefined): Uint8Array {
  const s = typeof text === 'string' ? text : ''
  if (encoding === 'base64') {
    const binary = atob(s)
    return Uint8Array.from(binary, (c) => c.charCodeAt(0))
  }
  return new TextEncoder().encode(s)
}
