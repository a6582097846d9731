/**
 * Redis as the relay's bus: pub/sub against Streams, on one local
 * `redis-server`, with the message size of a small Yjs update. Measures the
 * one-message round trip (publish → subscriber) and a burst's throughput with
 * Redis' own CPU per message. This is what the relay's choice of pub/sub
 * rests on; see docs/relay.md.
 */
import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { median, percentile, printTable } from './stats.js'
import { startRedis } from '../../apps/relay/test/services.js'

const pingPongs = 2000
const burst = 20_000
const payload = Buffer.alloc(120, 7)

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

interface Transport {
  /** Send one message; `onMessage` runs when the reader has it. */
  send(): void
  onMessage: () => void
  close(): Promise<void>
}

async function pubsub(url: string): Promise<Transport> {
  const pub = new Redis(url)
  const sub = new Redis(url)
  const t: Transport = {
    send() {
      void pub.publish('bench:room', payload)
    },
    onMessage() {},
    async close() {
      pub.disconnect()
      sub.disconnect()
    },
  }
  sub.on('messageBuffer', () => {
    t.onMessage()
  })
  await sub.subscribe('bench:room')
  return t
}

async function streams(url: string): Promise<Transport> {
  const pub = new Redis(url)
  const reader = new Redis(url)
  let last = '$'
  let open = true
  const t: Transport = {
    // Trimmed like a relay would have to (approximate MAXLEN keeps XADD O(1)); a
    // reader further behind than MAXLEN loses entries, so it is larger than the burst.
    send() {
      void pub.xaddBuffer('bench:stream', 'MAXLEN', '~', String(burst * 2), '*', 'u', payload)
    },
    onMessage() {},
    async close() {
      open = false
      pub.disconnect()
      reader.disconnect()
    },
  }
  const loop = async (): Promise<void> => {
    while (open) {
      const result = await reader.xreadBuffer('BLOCK', 1000, 'STREAMS', 'bench:stream', last).catch(() => null)
      if (result === null) continue
      for (const [, entries] of result) {
        for (const [id] of entries) {
          last = id.toString()
          t.onMessage()
        }
      }
    }
  }
  await pub.del('bench:stream')
  void loop()
  await new Promise((resolve) => setTimeout(resolve, 50)) // the first XREAD is blocking at '$'
  return t
}

async function measure(t: Transport, redisPid: number): Promise<{ latencies: number[]; perSecond: number; cpuUsPerMessage: number }> {
  const latencies: number[] = []
  for (let i = 0; i < pingPongs; i++) {
    const started = performance.now()
    await new Promise<void>((resolve) => {
      t.onMessage = resolve
      t.send()
    })
    latencies.push(performance.now() - started)
  }
  let got = 0
  const cpu0 = cpuMs(redisPid)
  const started = performance.now()
  await new Promise<void>((resolve) => {
    t.onMessage = () => {
      if (++got === burst) resolve()
    }
    for (let i = 0; i < burst; i++) t.send()
  })
  const seconds = (performance.now() - started) / 1000
  return { latencies, perSecond: burst / seconds, cpuUsPerMessage: ((cpuMs(redisPid) - cpu0) * 1000) / burst }
}

/** Print pub/sub against Streams. */
export async function runRedisTransportBench(): Promise<void> {
  const redis = await startRedis()
  try {
    const ps = await pubsub(redis.url)
    const a = await measure(ps, redis.pid as number)
    await ps.close()
    const st = await streams(redis.url)
    const b = await measure(st, redis.pid as number)
    await st.close()
    const baselineName = 'Redis Streams (XADD MAXLEN ~ / XREAD BLOCK)'
    printTable(`Redis bus for the relay: pub/sub vs Streams (${payload.byteLength}-byte messages, one local redis-server)`, [
      { name: 'one message, publish → reader, median', ours: median(a.latencies), baseline: median(b.latencies), unit: 'ms', baselineName },
      { name: 'one message, publish → reader, p99', ours: percentile(a.latencies, 99), baseline: percentile(b.latencies, 99), unit: 'ms', baselineName },
      { name: `burst of ${burst}: messages per second`, ours: a.perSecond, baseline: b.perSecond, unit: 'msg/s', baselineName },
      { name: 'Redis CPU per message in the burst', ours: a.cpuUsPerMessage, baseline: b.cpuUsPerMessage, unit: 'µs', baselineName },
    ])
  } finally {
    await redis.stop()
  }
}
