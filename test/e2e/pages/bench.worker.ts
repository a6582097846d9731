// The SDK host plus the raw baselines measured in the same worker: an echo and a bare Dexie get.
import { Dexie } from 'dexie'
import { openMemory, type Memory } from '@engram/core'
import { exposeMemory } from '@engram/worker'

exposeMemory()

let db: Dexie | undefined
let direct: Memory | undefined

self.addEventListener('message', (event: MessageEvent) => {
  const data = event.data as { bench?: string; i?: number; dbName?: string; key?: [string, string]; n?: number; mode?: Mode }
  if (data?.bench === 'echo') return self.postMessage({ bench: 'echo', i: data.i })
  // Raw postMessage whose handler does the bare Dexie get before answering: no Comlink, no SDK.
  if (data?.bench === 'get-echo')
    return void db!
      .table('facts')
      .get(data.key!)
      .then((row: unknown) => self.postMessage({ bench: 'get-echo', row }))
  if (data?.bench === 'dexie-get')
    void dexieGets(data.dbName!, data.key!, data.n!, data.mode ?? 'get').then((samples) => self.postMessage({ bench: 'dexie-get', samples }))
})

/** `get`: the bare Dexie get (the baseline); `tx`: the same get in an explicit read transaction; `engram`: facts.get of a store opened in this worker. */
type Mode = 'get' | 'tx' | 'engram'

async function dexieGets(dbName: string, key: [string, string], n: number, mode: Mode): Promise<number[]> {
  const d = (db ??= await new Dexie(dbName).open())
  const facts = d.table('facts')
  if (mode === 'engram') direct ??= await openMemory({ appId: dbName.split(':')[1]!, userId: dbName.split(':')[2]! })
  const once =
    mode === 'get' ? () => facts.get(key) : mode === 'tx' ? () => d.transaction('r', facts, () => facts.get(key)) : () => direct!.facts.get(key[0], key[1])
  for (let i = 0; i < 200; i++) await once()
  const samples: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await once()
    samples.push(performance.now() - t0)
  }
  return samples
}
