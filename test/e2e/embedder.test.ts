import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type {} from './pages/embedder-page.js'
import type { EmbedderCommand, Ranked } from './pages/embedder.worker.js'
import { buildTestPages } from './support/build-pages.js'
import { copyEmbedderAssets } from './support/embedder-assets.js'
import { launchProfile, type PageServer, type Profile, startPageServer } from './support/pages.js'

/*
 * @engram/embed-local in Chromium as an app runs it: the store in a dedicated worker, the model
 * (USE lite on TensorFlow.js WASM) in a worker of its own, its files served from the page's assets,
 * real IndexedDB. Hybrid search finds a turn that shares no word with the question.
 */

const EVIDENCE = 'Lately I keep playing old Miles Davis and Thelonious Monk albums while I cook dinner.'
const QUESTION = 'What kind of music do I enjoy?'
const TURNS = [
  'Morning! The weather finally cleared up after three grey days.',
  'Nice, I might finally get the bike out this afternoon.',
  'Work was hectic, the quarterly report is due on Friday.',
  'Good luck with it, those deadlines always pile up at once.',
  'The music at the office party was far too loud to talk over.',
  'Ha, that happens every year, someone always turns it up.',
  'We are thinking about a weekend in the mountains next month.',
  'Take warm clothes, it gets cold up there at night.',
  'My sister is moving to a new flat across town.',
  'Tell her I can help carry boxes on Saturday.',
  EVIDENCE,
  'That sounds like a lovely way to spend an evening.',
  'The new bakery on the corner sells amazing rye bread.',
  'I will stop by there on my way home tomorrow.',
  'My phone battery dies by lunchtime these days.',
  'Maybe it is time for a new battery or a new phone.',
]

let server: PageServer
let profile: Profile

beforeAll(async () => {
  await copyEmbedderAssets(await buildTestPages())
  server = await startPageServer()
  profile = await launchProfile('embedder')
})
afterAll(async () => {
  await profile?.close()
  await server?.close()
})

async function run<T>(command: EmbedderCommand): Promise<T> {
  const page = await server.open(profile, 'embedder')
  try {
    return (await page.evaluate((c) => window.embedder.run(c), command)) as T
  } finally {
    await page.close()
  }
}

describe('the shipped embedder in a Chromium worker', () => {
  it('embeds in the background, and hybrid finds a turn that shares no word with the question; reopening keeps the vectors, a model change re-embeds', async () => {
    const userId = `e${Date.now().toString(36)}`
    const first = await run<{ ranked: Ranked[]; embedder: string }>({ cmd: 'remember', userId, turns: TURNS, queries: [QUESTION] })
    expect(first.embedder).toBe('ok')
    const [music] = first.ranked
    // Words alone find only the party's loud music (and the turns around it); the meaning finds the jazz records.
    expect(music!.text).not.toContain(EVIDENCE)
    expect(music!.hybrid).toContain(EVIDENCE)

    // The same model again: the stored vectors answer, and only the query is embedded.
    const again = await run<{ vector: string[]; embedded: string[] }>({ cmd: 'reopen', userId, query: QUESTION })
    expect(again.vector.slice(0, 3)).toContain(EVIDENCE)
    expect(again.embedded).toEqual([QUESTION])

    // Another model id: the old vectors are dropped and every message is embedded again before they answer.
    const changed = await run<{ vector: string[]; embedded: string[] }>({
      cmd: 'reopen',
      userId,
      query: QUESTION,
      model: 'use-lite-retrained@2',
      expectEmbedded: TURNS.length,
    })
    expect(changed.embedded).toEqual(expect.arrayContaining(TURNS))
    expect(changed.vector.slice(0, 3)).toContain(EVIDENCE)
  }, 180_000)
})
