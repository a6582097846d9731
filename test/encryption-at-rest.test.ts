import 'fake-indexeddb/auto'
import { IDBFactory } from 'fake-indexeddb'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type BackgroundExtractor, databaseName, openMemory, type Memory } from '@engram/core'
import { createLoopbackNetwork, startSync, type Sync } from '@engram/sync'
import { rawDump, whereFound } from './support/raw-idb.js'

/*
 * At-rest encryption tested as an attacker would: canary strings go in through
 * every API, with conversation sync on, then every object store and every index
 * of every IndexedDB database of the origin — the store's and the documents
 * sync keeps, the project's and each session's — is read raw and searched for
 * them. The same run on a plain store finds every canary, so the scan would see
 * them if they were there. Each test has an origin of its own (a fresh global
 * IndexedDB), so the scan never sees another test's databases.
 */

let counter = 0
const cleanups: Array<() => Promise<unknown> | unknown> = []
beforeEach(() => {
  globalThis.indexedDB = new IDBFactory()
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const newKey = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt'])

/** A canary: lower-case letters and digits, unchanged by the analyzer (no suffix the stemmer strips). */
const canary = (what: string) => `zq${what.toLowerCase().replace(/[^a-z]/g, '')}x7k`

/** Writes a canary through every API that stores what a user or app wrote; returns them all. */
async function writeCanaries(m: Memory, projectId: string): Promise<string[]> {
  const c: string[] = []
  const w = (what: string) => {
    const value = canary(what)
    c.push(value)
    return value
  }
  await m.projects.update(projectId, { name: `Project ${w('projectname')}` })
  const space = await m.spaces.create({ name: `Space ${w('spacename')}` })
  void space
  // Facts: key, value, tags, source note, history (two versions), a deleted one.
  await m.facts.set(projectId, w('factkey'), { note: w('factvalue') }, { tags: [w('facttag')], source: { note: w('factsource') } })
  await m.facts.set(projectId, 'food', `first ${w('facthistoryone')}`)
  await m.facts.set(projectId, 'food', `second ${w('facthistorytwo')}`)
  await m.facts.set(projectId, w('deletedkey'), w('deletedvalue'))
  await m.facts.delete(projectId, canary('deletedkey'))
  // Blocks: label, value, description.
  await m.blocks.set(projectId, w('blocklabel'), `Block ${w('blockvalue')}`, { description: w('blockdescription') })
  // Sessions, messages, summaries.
  const session = await m.sessions.create(projectId, { title: w('sessiontitle'), channel: w('sessionchannel') })
  await m.messages.append(session.id, { role: 'user', content: `hello ${w('messagecontent')}`, meta: { note: w('messagemeta') } })
  await m.messages.appendExchange(session.id, `question ${w('exchangeuser')}`, `answer ${w('exchangeassistant')}`)
  await m.messages.appendMany(session.id, [{ role: 'user', content: w('appendmany') }])
  await m.summaries.create(projectId, { kind: 'project', text: `summary ${w('projectsummary')}` })
  await m.sessions.close(session.id, { summary: `closed ${w('sessionsummary')}` })
  // Archive passages.
  await m.archive.create(projectId, `passage ${w('passagetext')}`, { tags: [w('passagetag')], source: { note: w('passagesource') } })
  // Agent runtime: journal, runs (checkpoints, tool events, status), tasks, usage, lessons, outcomes, turns.
  const s2 = await m.sessions.create(projectId)
  await m.journal.append(s2.id, { kind: w('journalkind'), payload: { text: w('journalpayload') }, idempotencyKey: w('journalidempotency') })
  await m.runs.setCheckpoint('run-1', w('checkpointphase'), {
    status: w('checkpointstatus'),
    output: { text: w('checkpointoutput') },
    error: w('checkpointerror'),
  })
  await m.runs.appendToolEvent('run-1', { tool: w('tooleventtool'), input: { q: w('tooleventinput') }, output: { a: w('tooleventoutput') }, status: 'ok' })
  await m.runs.setStatus('run-1', { status: 'done', summary: w('runsummary') })
  await m.tasks.create(projectId, { description: `task ${w('taskdescription')}`, dueAt: Date.now() + 60_000, kind: w('taskkind') })
  await m.usage.append({ sessionId: s2.id, projectId, model: w('usagemodel'), inputTokens: 10, outputTokens: 5 })
  await m.lessons.create(projectId, w('lessondomain'), `always ${w('lessonrule')}`)
  await m.lessons.appendOutcome(projectId, { domain: w('outcomedomain'), score: 0.5, lesson: `lesson ${w('outcomelesson')}` })
  const s3 = await m.sessions.create(projectId)
  await m.turns.begin(projectId, { sessionId: s3.id, turnId: 't1', prompt: `prompt ${w('turnprompt')}`, budget: 500 })
  await m.turns.partial({ sessionId: s3.id, turnId: 't1', text: w('turnpartial') })
  await m.turns.end({ sessionId: s3.id, turnId: 't1', reply: `reply ${w('turnreply')}` })
  // Observations: the scenario's observer notes the turn (its text is a canary of its own).
  c.push(canary('observationtext'))
  await m.extraction.flush()
  // Limitations, patterns, people, artifacts (name and metadata).
  await m.limitations.store({ title: `Cannot ${w('limitationtitle')}`, description: w('limitationdescription'), plan: w('limitationplan') })
  await m.patterns.observe(projectId, `likes ${w('patterntext')}`)
  await m.people.link(`email:${w('personalias')}`, `user:${w('personcanonical')}`)
  await m.people.markWelcomed(`user:${canary('personcanonical')}`)
  await m.artifacts.put(projectId, { name: `${w('artifactname')}.txt`, mimeType: 'text/plain', data: 'artifact bytes', meta: { note: w('artifactmeta') } })
  // Entities and relations: names, types, aliases, observations, predicates, literals, provenance.
  const subject = await m.entities.upsert(projectId, {
    name: `Ada ${w('entityname')}`,
    type: w('entitytype'),
    aliases: [w('entityalias')],
    observations: [w('entityobservation')],
  })
  const object = await m.entities.upsert(projectId, { name: `Org ${w('objectname')}`, type: 'organisation' })
  await m.relations.add(projectId, { subject: subject.id, predicate: w('relationpredicate'), object: object.id, provenance: { source: w('relationsource') } })
  await m.relations.add(projectId, { subject: subject.id, predicate: 'likes', value: w('relationliteral') })
  return c
}

/** Reads the canaries back through the API: encryption must change nothing the app sees. */
async function readBack(m: Memory, projectId: string): Promise<void> {
  expect((await m.projects.get(projectId))?.name).toBe(`Project ${canary('projectname')}`)
  expect((await m.facts.get(projectId, canary('factkey')))?.value).toEqual({ note: canary('factvalue') })
  expect((await m.facts.list(projectId, { tag: canary('facttag') })).items.map((f) => f.key)).toEqual([canary('factkey')])
  expect((await m.facts.history(projectId, 'food')).map((v) => v.value)).toEqual([`first ${canary('facthistoryone')}`, `second ${canary('facthistorytwo')}`])
  expect((await m.blocks.get(projectId, canary('blocklabel')))?.value).toBe(`Block ${canary('blockvalue')}`)
  expect((await m.search(projectId, canary('messagecontent'))).map((h) => h.text)).toContain(`hello ${canary('messagecontent')}`)
  expect((await m.search(projectId, canary('passagetext'))).map((h) => h.kind)).toContain('passage')
  expect((await m.limitations.open()).map((l) => l.title)).toContain(`Cannot ${canary('limitationtitle')}`)
  expect(await m.people.resolve(`email:${canary('personalias')}`)).toBe(`user:${canary('personcanonical')}`)
  expect((await m.lessons.list(projectId, { domain: canary('lessondomain') })).map((l) => l.rule)).toEqual([`always ${canary('lessonrule')}`])
  const ada = await m.entities.resolve(projectId, canary('entityalias'))
  expect(ada?.observations).toEqual([canary('entityobservation')])
  expect((await m.relations.current(projectId, ada!.id)).map((r) => r.value ?? r.predicate).sort()).toEqual(
    [canary('relationliteral'), canary('relationpredicate')].sort(),
  )
  expect((await m.search(projectId, canary('entityobservation'))).map((h) => h.kind)).toContain('entity')
  const noted = await m.search(projectId, canary('observationtext'), { mode: 'text' })
  expect(noted.map((h) => [h.kind, h.text])).toEqual([['observation', `noted ${canary('observationtext')}`]])
  const context = await m.context.build(projectId, { query: canary('passagetext'), budget: 4000 })
  expect(context.text).toContain(canary('passagetext'))
}

async function scenario(options: { encrypted: boolean; e2e?: boolean }) {
  const user = `attacker${++counter}`
  const key = await newKey()
  // An embedder, so that queued texts and stored vectors are on disk too.
  const embedder = { dimensions: 4, embed: async (texts: string[]) => texts.map((t) => Float32Array.from([t.length, 1, 2, 3])) }
  // An observer, so that observations (and their search postings) are on disk too.
  const extractor: BackgroundExtractor = {
    extract: async () => [],
    observe: async () => ({ observations: [{ text: `noted ${canary('observationtext')}`, priority: 'high' }] }),
    settings: { observeTokens: 1 },
  }
  const memory = await openMemory({ appId: 'at-rest', userId: user, embedder, extractor, indexedDB, ...(options.encrypted ? { encryption: { key } } : {}) })
  cleanups.push(() => memory.close())
  // Conversations sync too: each session is a document of its own, stored like the project's.
  await memory.projects.create({ id: 'p', name: 'P', sync: { enabled: true, messages: true } })
  const network = createLoopbackNetwork()
  const docPrefix = `at-rest-doc-${user}`
  const sync: Sync = startSync(memory, {
    connect: network.connector('a'),
    docName: (p) => `${docPrefix}:${p}`,
    onError: () => {},
    ...(options.e2e ? { encryption: { key: await newKey() } } : {}),
  })
  cleanups.push(() => sync.close())
  await memory.sync.whenSynced('p')
  const canaries = await writeCanaries(memory, 'p')
  await sync.flush()
  await network.settle()
  await sync.flush()
  await readBack(memory, 'p')
  // Wait until the background embedder has stored the vectors of the messages and passages.
  await expect.poll(async () => (await memory.search('p', canary('passagetext'), { mode: 'vector' })).length, { timeout: 10_000 }).toBeGreaterThan(0)
  const dump = await rawDump(indexedDB)
  return { canaries, dump, memory, key, user }
}

/** The parts of a raw dump that are the stored updates of a session's document (`<prefix>:p:<sessionId>`). */
const sessionDocs = (dump: Record<string, string>, user: string) =>
  Object.keys(dump).filter((part) => part.includes(`at-rest-doc-${user}:p:`) && part.endsWith('/store:updates'))

describe('at-rest encryption, as an attacker reads the disk', () => {
  it('a plain store shows every canary in its raw IndexedDB (the scan sees what is there)', async () => {
    const { canaries, dump, user } = await scenario({ encrypted: false })
    const missing = canaries.filter((c) => whereFound(dump, c).length === 0)
    expect(missing).toEqual([])
    // The session documents hold the messages too.
    expect(sessionDocs(dump, user).length).toBeGreaterThan(0)
    expect(sessionDocs(dump, user).some((part) => dump[part]!.includes(canary('messagecontent')))).toBe(true)
    expect(dump[`${databaseName('at-rest', user)}/store:vectors`]).toMatch(/(^|\n)vector(\n|$)/)
  })

  it.each([
    ['without end-to-end sync encryption', false],
    ['with end-to-end sync encryption', true],
  ])('an encrypted store shows none in any object store or index, nor in the sync documents (%s)', async (_label, e2e) => {
    const { canaries, dump, user } = await scenario({ encrypted: true, e2e })
    // The store's database (every table, the search index among them) and the sync documents were scanned.
    expect(Object.keys(dump).some((part) => part.includes(':p/store:updates'))).toBe(true)
    expect(sessionDocs(dump, user).length).toBeGreaterThan(0)
    for (const table of ['facts', 'factVersions', 'blocks', 'messages', 'textDocs', 'textBlocks', 'journal', 'people'])
      expect(Object.keys(dump).some((part) => part.endsWith(`/store:${table}`))).toBe(true)
    // Stored vectors are sealed: no row of the vectors table keeps a vector field in clear.
    expect(dump[`${databaseName('at-rest', user)}/store:vectors`]).not.toMatch(/(^|\n)vector(\n|$)/)
    expect(dump[`${databaseName('at-rest', user)}/store:vectors`]).toContain('_c')
    // Plain words of the content are not there either (search terms are keyed hashes).
    for (const word of ['question', 'answer', 'hello', 'always', 'likes']) expect(whereFound(dump, word), word).toEqual([])
    const found = Object.fromEntries(canaries.map((c) => [c, whereFound(dump, c)] as const).filter(([, where]) => where.length > 0))
    expect(found).toEqual({})
  })
})

/** The key generations of the sealed updates in the sync documents whose names hold `prefix` (0: a plain update). */
async function docGenerations(prefix: string): Promise<number[]> {
  const out: number[] = []
  for (const { name } of await indexedDB.databases()) {
    if (!name?.includes(prefix)) continue
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const r = indexedDB.open(name)
      r.onsuccess = () => resolve(r.result)
      r.onerror = () => reject(r.error)
    })
    const values = await new Promise<unknown[]>((resolve, reject) => {
      const r = db.transaction('updates').objectStore('updates').getAll()
      r.onsuccess = () => resolve(r.result)
      r.onerror = () => reject(r.error)
    })
    for (const v of values) out.push(v instanceof Uint8Array ? 0 : ((v as { s: Uint8Array }).s[1] ?? -1))
    db.close()
  }
  return out
}

describe('sync documents of an encrypted store', () => {
  it('are re-sealed with the new keys when a rekey finishes, and reopen with them', async () => {
    const { memory, user } = await scenario({ encrypted: true })
    const prefix = `at-rest-doc-${user}`
    expect(new Set(await docGenerations(prefix))).toEqual(new Set([1]))
    await memory.encryption.rekey(await newKey())
    await expect.poll(async () => [...new Set(await docGenerations(prefix))]).toEqual([2])
    // Sync starts again on the re-sealed document: it loads (nothing to re-push), the store reads as before.
    await cleanups[1]!()
    const errors: unknown[] = []
    const network = createLoopbackNetwork()
    const again = startSync(memory, { connect: network.connector('a'), docName: (p) => `${prefix}:${p}`, onError: (e) => errors.push(e) })
    cleanups.push(() => again.close())
    await memory.sync.whenSynced('p')
    await again.flush()
    expect(errors).toEqual([])
    expect(new Set(await docGenerations(prefix))).toEqual(new Set([2]))
    await readBack(memory, 'p')
  })

  it('kept plain before the store was encrypted are re-written sealed when sync starts again', async () => {
    const { memory, user, canaries } = await scenario({ encrypted: false })
    const prefix = `at-rest-doc-${user}`
    expect(await docGenerations(prefix)).toContain(0)
    // Stop sync (the scenario's cleanup closes it again, harmlessly), encrypt the store, start sync again.
    await cleanups[1]!()
    await memory.encryption.enable(await newKey())
    const network = createLoopbackNetwork()
    const again = startSync(memory, { connect: network.connector('a'), docName: (p) => `${prefix}:${p}`, onError: () => {} })
    cleanups.push(() => again.close())
    await memory.sync.whenSynced('p')
    await again.flush()
    // The plain copies are erased once the sealed ones are written.
    await expect.poll(async () => [...new Set(await docGenerations(prefix))]).toEqual([1])
    const dump = await rawDump(indexedDB)
    expect(canaries.filter((c) => whereFound(dump, c).length > 0)).toEqual([])
    expect((await memory.facts.get('p', canary('factkey')))?.value).toEqual({ note: canary('factvalue') })
  })

  it('enable while sync runs re-writes every stored document sealed, loaded or not, and erases the plain copies', async () => {
    const { memory, user, canaries } = await scenario({ encrypted: false })
    const prefix = `at-rest-doc-${user}`
    // Sync again with no session loaded at start: the session documents stay on disk, plain, unopened.
    await cleanups[1]!()
    const network = createLoopbackNetwork()
    const errors: unknown[] = []
    const again = startSync(memory, {
      connect: network.connector('a'),
      docName: (p) => `${prefix}:${p}`,
      sessions: { eager: 0 },
      onError: (e) => errors.push(e),
    })
    cleanups.push(() => again.close())
    await memory.sync.whenSynced('p')
    expect(await docGenerations(prefix)).toContain(0)
    await memory.encryption.enable(await newKey())
    await again.flush()
    // The open project document switches at once; the sweep re-writes the session documents after it.
    await expect
      .poll(async () => {
        const dump = await rawDump(indexedDB)
        const plainCopies = (await indexedDB.databases()).map((d) => d.name).filter((n) => n?.startsWith(prefix))
        return { canaries: canaries.filter((c) => whereFound(dump, c).length > 0), plainCopies }
      })
      .toEqual({ canaries: [], plainCopies: [] })
    expect(new Set(await docGenerations(prefix))).toEqual(new Set([1]))
    // Everything opens again with the key: a session document loads sealed, the store reads back.
    const [session] = (await memory.sessions.list('p')).items
    await again.openSession('p', session!.id)
    expect(errors).toEqual([])
    await readBack(memory, 'p')
  })
})
