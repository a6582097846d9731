/*
 * What an attacker who copies the browser profile sees: every database, every
 * object store (keys and values) and every index (its keys), read with the raw
 * IndexedDB API, flattened to text. Bytes (Uint8Array, typed arrays, Blobs) are
 * read as Latin-1 and UTF-16, so UTF-8 or UTF-16 text inside them shows up too.
 */

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result)
    req.onerror = () => reject(req.error)
  })
}

function bytesText(bytes: Uint8Array): string {
  const latin1 = Buffer.from(bytes).toString('latin1')
  const utf16 = bytes.byteLength % 2 === 0 ? Buffer.from(bytes).toString('utf16le') : ''
  return `${latin1}\n${utf16}`
}

async function flatten(value: unknown, out: string[]): Promise<void> {
  if (value === null || value === undefined) return
  if (typeof value === 'string') out.push(value)
  else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') out.push(String(value))
  else if (value instanceof ArrayBuffer) out.push(bytesText(new Uint8Array(value)))
  else if (ArrayBuffer.isView(value)) out.push(bytesText(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)))
  else if (typeof Blob !== 'undefined' && value instanceof Blob) out.push(bytesText(new Uint8Array(await value.arrayBuffer())))
  else if (Array.isArray(value)) for (const v of value) await flatten(v, out)
  else if (value instanceof Map) for (const [k, v] of value) await flatten([k, v], out)
  else if (value instanceof Set) for (const v of value) await flatten(v, out)
  else if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k)
      await flatten(v, out)
    }
  }
}

/** One database, raw: `store:<name>` → its keys and values, `index:<store>.<index>` → the index's keys. */
export async function rawDatabase(factory: IDBFactory, name: string): Promise<Record<string, string>> {
  const db = await request(factory.open(name))
  const out: Record<string, string> = {}
  try {
    for (const storeName of Array.from(db.objectStoreNames)) {
      const tx = db.transaction(storeName, 'readonly')
      const store = tx.objectStore(storeName)
      const parts: string[] = []
      const [keys, values] = await Promise.all([request(store.getAllKeys()), request(store.getAll())])
      await flatten(keys, parts)
      for (const v of values) await flatten(v, parts)
      out[`store:${storeName}`] = parts.join('\n')
      for (const indexName of Array.from(store.indexNames)) {
        const index = db.transaction(storeName, 'readonly').objectStore(storeName).index(indexName)
        const indexParts: string[] = []
        await new Promise<void>((resolve, reject) => {
          const cursor = index.openKeyCursor()
          cursor.onsuccess = () => {
            const c = cursor.result
            if (!c) return resolve()
            void flatten([c.key, c.primaryKey], indexParts).then(() => c.continue())
          }
          cursor.onerror = () => reject(cursor.error)
        })
        out[`index:${storeName}.${indexName}`] = indexParts.join('\n')
      }
    }
  } finally {
    db.close()
  }
  return out
}

/** Every database of `factory` whose name passes `filter`, raw: `<database>/<part>` → text. */
export async function rawDump(factory: IDBFactory, filter: (name: string) => boolean = () => true): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const names = (await factory.databases()).map((d) => d.name!).filter(filter)
  for (const name of names.sort()) {
    for (const [part, text] of Object.entries(await rawDatabase(factory, name))) out[`${name}/${part}`] = text
  }
  return out
}

/** The parts of a raw dump where `needle` appears (case-insensitive). */
export function whereFound(dump: Record<string, string>, needle: string): string[] {
  const n = needle.toLowerCase()
  return Object.entries(dump)
    .filter(([, text]) => text.toLowerCase().includes(n))
    .map(([part]) => part)
}
