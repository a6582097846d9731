import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { FanoutStats } from '../cluster/redis-fanout.js'

/** Counters and gauges the relay exports at `/metrics`. */
export interface RelayMetrics {
  connectionsOpened: number
  /** Refused connections by close reason (auth, limits). */
  refused: Map<string, number>
  /** Closed connections by close reason. */
  closed: Map<string, number>
  messagesIn: number
  messagesOut: number
  bytesIn: number
  bytesOut: number
  documentsLoadedTotal: number
  documentsUnloadedTotal: number
  compactions: number
  /** Seconds spent compacting, all rooms together. */
  compactionSeconds: number
  /** Document updates dropped because the connection's token is read-only. */
  writesDropped: number
  /** Rooms refused because their stored data is damaged, with the first error seen. */
  damagedRooms: Map<string, string>
  /** Messages between instances, when a fanout is configured. */
  fanout: FanoutStats | null
  persistErrors: number
  /** Updates written to the store (several per commit under load). */
  persistedUpdates: number
  /** Latency of each store commit, in seconds. */
  persistLatency: Histogram
  /** Documents opened on multiplexed sockets. */
  documentsOpened: number
  /** Documents refused on multiplexed sockets (the socket stayed), by close reason. */
  documentsRefused: Map<string, number>
  /** Documents their owner purged (rooms dropped with their storage). */
  documentsDropped: number
}

/** A Prometheus histogram with fixed buckets. */
export interface Histogram {
  readonly buckets: readonly number[]
  readonly counts: number[]
  sum: number
  count: number
}

const persistBuckets = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5]

/** Fresh zeroed metrics. */
export function createMetrics(): RelayMetrics {
  return {
    connectionsOpened: 0,
    refused: new Map(),
    closed: new Map(),
    messagesIn: 0,
    messagesOut: 0,
    bytesIn: 0,
    bytesOut: 0,
    documentsLoadedTotal: 0,
    documentsUnloadedTotal: 0,
    compactions: 0,
    compactionSeconds: 0,
    writesDropped: 0,
    damagedRooms: new Map(),
    fanout: null,
    persistErrors: 0,
    persistedUpdates: 0,
    persistLatency: { buckets: persistBuckets, counts: persistBuckets.map(() => 0), sum: 0, count: 0 },
    documentsOpened: 0,
    documentsRefused: new Map(),
    documentsDropped: 0,
  }
}

/** Record one observation (seconds) in a histogram. */
export function observe(h: Histogram, seconds: number): void {
  h.sum += seconds
  h.count++
  for (let i = 0; i < h.buckets.length; i++) {
    if (seconds <= (h.buckets[i] as number)) h.counts[i] = (h.counts[i] as number) + 1
  }
}

/** Add one to a labelled counter. */
export function increment(counter: Map<string, number>, label: string): void {
  counter.set(label, (counter.get(label) ?? 0) + 1)
}

/** Live values read at scrape time. */
export interface RelayGauges {
  connections: number
  documentsLoaded: number
  users: number
  /** Most documents open for one user, and the quota (`maxDocumentsPerUser`). */
  userDocumentsPeak: number
  maxDocumentsPerUser: number
  /** @deprecated The same figures as `userDocumentsPeak` and `maxDocumentsPerUser`. */
  userRoomsPeak: number
  /** @deprecated See `maxDocumentsPerUser`. */
  maxRoomsPerUser: number
  /** Multiplexed (`/mux`) sockets open, and the documents open on them. */
  muxConnections: number
  muxDocuments: number
  /** Most bytes stored by one connected user, and the quota. */
  userBytesPeak: number
  maxBytesPerUser: number
}

const loopDelay = monitorEventLoopDelay({ resolution: 10 })
let loopDelayEnabled = false

/** Start sampling event-loop delay (once per process). */
export function watchEventLoop(): void {
  if (!loopDelayEnabled) loopDelay.enable()
  loopDelayEnabled = true
}

/** Render metrics as Prometheus text exposition format (version 0.0.4). */
export function renderMetrics(m: RelayMetrics, g: RelayGauges): string {
  const out: string[] = []
  const metric = (name: string, type: 'counter' | 'gauge', help: string, value: number): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`)
  }
  const labelled = (name: string, help: string, counter: Map<string, number>): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`)
    for (const [reason, value] of counter) out.push(`${name}{reason="${reason}"} ${value}`)
  }
  metric('engram_relay_connections', 'gauge', 'Open WebSocket connections.', g.connections)
  metric('engram_relay_users_connected', 'gauge', 'Users with at least one open connection.', g.users)
  metric('engram_relay_documents_loaded', 'gauge', 'Documents held in memory.', g.documentsLoaded)
  metric('engram_relay_connections_opened_total', 'counter', 'Accepted connections.', m.connectionsOpened)
  labelled('engram_relay_connections_refused_total', 'Connections refused before any document was loaded.', m.refused)
  labelled('engram_relay_connections_closed_total', 'Closed connections by close reason.', m.closed)
  metric('engram_relay_messages_in_total', 'counter', 'Messages received.', m.messagesIn)
  metric('engram_relay_messages_out_total', 'counter', 'Messages sent.', m.messagesOut)
  metric('engram_relay_bytes_in_total', 'counter', 'Bytes received in messages.', m.bytesIn)
  metric('engram_relay_bytes_out_total', 'counter', 'Bytes sent in messages.', m.bytesOut)
  metric('engram_relay_documents_loaded_total', 'counter', 'Documents loaded from the store.', m.documentsLoadedTotal)
  metric('engram_relay_documents_unloaded_total', 'counter', 'Documents flushed and unloaded.', m.documentsUnloadedTotal)
  metric('engram_relay_compactions_total', 'counter', 'Stored updates merged into one snapshot.', m.compactions)
  metric('engram_relay_compaction_seconds_total', 'counter', 'Time spent compacting documents.', m.compactionSeconds)
  metric('engram_relay_writes_dropped_total', 'counter', 'Document updates dropped from read-only connections.', m.writesDropped)
  metric('engram_relay_rooms_damaged', 'gauge', 'Rooms refused because their stored data is damaged (see the error log).', m.damagedRooms.size)
  metric('engram_relay_user_documents_peak', 'gauge', 'Most documents open for one user.', g.userDocumentsPeak)
  metric('engram_relay_user_documents_limit', 'gauge', 'Documents one user may have open (maxDocumentsPerUser).', g.maxDocumentsPerUser)
  metric('engram_relay_user_rooms_peak', 'gauge', 'Deprecated: engram_relay_user_documents_peak.', g.userRoomsPeak)
  metric('engram_relay_user_rooms_limit', 'gauge', 'Deprecated: engram_relay_user_documents_limit.', g.maxRoomsPerUser)
  metric('engram_relay_mux_connections', 'gauge', 'Open multiplexed (/mux) sockets.', g.muxConnections)
  metric('engram_relay_mux_documents', 'gauge', 'Documents open on multiplexed sockets.', g.muxDocuments)
  metric('engram_relay_documents_opened_total', 'counter', 'Documents opened on multiplexed sockets.', m.documentsOpened)
  labelled('engram_relay_documents_refused_total', 'Documents refused on multiplexed sockets (the socket stayed).', m.documentsRefused)
  metric('engram_relay_documents_dropped_total', 'counter', 'Documents purged by their owner (room and storage deleted).', m.documentsDropped)
  metric('engram_relay_user_bytes_peak', 'gauge', 'Most bytes stored by one connected user.', g.userBytesPeak)
  metric('engram_relay_user_bytes_limit', 'gauge', 'Bytes one user may store (maxBytesPerUser).', g.maxBytesPerUser)
  if (m.fanout !== null) {
    metric('engram_relay_fanout_connected', 'gauge', '1 while the connection to Redis is up.', m.fanout.connected ? 1 : 0)
    metric('engram_relay_fanout_published_total', 'counter', 'Messages published to other instances.', m.fanout.published)
    metric('engram_relay_fanout_received_total', 'counter', 'Messages received from other instances.', m.fanout.received)
    metric('engram_relay_fanout_publish_errors_total', 'counter', 'Publishes that failed (repaired by the next resync).', m.fanout.publishErrors)
    metric('engram_relay_fanout_resyncs_total', 'counter', 'Rereads of loaded rooms after Redis came back.', m.fanout.resyncs)
  }
  metric('engram_relay_persist_errors_total', 'counter', 'Failed store commits.', m.persistErrors)
  metric('engram_relay_persisted_updates_total', 'counter', 'Updates committed to the store.', m.persistedUpdates)
  const h = m.persistLatency
  out.push(
    '# HELP engram_relay_persist_seconds Latency of durable store commits (one per event-loop turn with updates).',
    '# TYPE engram_relay_persist_seconds histogram',
  )
  h.buckets.forEach((le, i) => {
    out.push(`engram_relay_persist_seconds_bucket{le="${le}"} ${h.counts[i] ?? 0}`)
  })
  out.push(
    `engram_relay_persist_seconds_bucket{le="+Inf"} ${h.count}`,
    `engram_relay_persist_seconds_sum ${h.sum}`,
    `engram_relay_persist_seconds_count ${h.count}`,
  )
  const mem = process.memoryUsage()
  metric('process_resident_memory_bytes', 'gauge', 'Resident set size.', mem.rss)
  metric('nodejs_heap_used_bytes', 'gauge', 'V8 heap in use.', mem.heapUsed)
  if (loopDelayEnabled) {
    // Since the previous scrape; reset so each scrape reports its own window.
    out.push('# HELP nodejs_eventloop_delay_seconds Event-loop delay since the previous scrape.', '# TYPE nodejs_eventloop_delay_seconds gauge')
    for (const q of [50, 99]) out.push(`nodejs_eventloop_delay_seconds{quantile="${q / 100}"} ${loopDelay.count > 0 ? loopDelay.percentile(q) / 1e9 : 0}`)
    out.push(`nodejs_eventloop_delay_seconds{quantile="1"} ${loopDelay.count > 0 ? loopDelay.max / 1e9 : 0}`)
    loopDelay.reset()
  }
  const cpu = process.cpuUsage()
  metric('process_cpu_seconds_total', 'counter', 'User and system CPU time.', (cpu.user + cpu.system) / 1e6)
  return out.join('\n') + '\n'
}
